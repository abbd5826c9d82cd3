"""Drawing run histories to images: `plot_summaries(summaries, "history.png")`.

Needs matplotlib (`pip install matplotlib`), imported only when drawing.
"""
from fe_core.summary.plot import plot_logs, plot_summaries, plottable_keys, visualize_logs

__all__ = ["plot_logs", "plot_summaries", "plottable_keys", "visualize_logs"]
