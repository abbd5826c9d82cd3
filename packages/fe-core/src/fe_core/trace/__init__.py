"""Traces: `Trace` and `PerDSTrace`, the Essential traces, the `Logger`, `sort_traces` and frequency parsing."""
from fe_core.trace.essential import EvalEssential, TestEssential, TrainEssential
from fe_core.trace.freq import Freq, parse_freq
from fe_core.trace.logger import Logger
from fe_core.trace.progress_bar import ProgressBar
from fe_core.trace.sort import sort_traces
from fe_core.trace.trace import PER_DS_HOOKS, TRACE_HOOKS, PerDSTrace, Trace, implemented_hooks

__all__ = ["Trace", "PerDSTrace", "implemented_hooks", "TRACE_HOOKS", "PER_DS_HOOKS", "TrainEssential",
           "EvalEssential", "TestEssential", "Logger", "ProgressBar", "sort_traces", "Freq", "parse_freq"]

# The trace libraries (imported after the base classes they build on).
from fe_core.trace import adapt, io, meta, metric, xai  # noqa: E402  pylint: disable=wrong-import-position

__all__ += ["adapt", "io", "meta", "metric", "xai"]
