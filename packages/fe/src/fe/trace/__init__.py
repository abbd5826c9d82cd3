"""Traces (FastEstimator's `fastestimator.trace`): `Trace`, `PerDSTrace`, and the `adapt`, `io` and `metric`
libraries."""
from fe_core.trace.essential import EvalEssential, TestEssential, TrainEssential
from fe_core.trace.logger import Logger
from fe_core.trace.progress_bar import ProgressBar
from fe_core.trace.trace import PerDSTrace, Trace
from fe.trace import adapt, io, metric, progress_bar, trace

__all__ = ["EvalEssential", "Logger", "PerDSTrace", "ProgressBar", "TestEssential", "Trace", "TrainEssential", "adapt",
           "io", "metric", "progress_bar", "trace"]
