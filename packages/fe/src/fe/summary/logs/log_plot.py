"""Drawing run histories (FastEstimator's `fastestimator.summary.logs.log_plot`).

Needs matplotlib (`pip install matplotlib`), imported only when drawing.
"""
from fe_core.summary.plot import plot_logs, plot_summaries, plottable_keys, visualize_logs

__all__ = ["plot_logs", "plot_summaries", "plottable_keys", "visualize_logs"]
