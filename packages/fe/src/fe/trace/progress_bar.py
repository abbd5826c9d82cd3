"""`ProgressBar`: a live per-epoch progress bar (fe's addition; not in FastEstimator 1.x)."""
from fe_core.trace.progress_bar import ProgressBar

__all__ = ["ProgressBar"]
