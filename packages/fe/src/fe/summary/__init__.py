"""Experiment records (FastEstimator's `fastestimator.summary`): `Summary`, `ValWithError`, `System`, and `logs`
(parse saved logs, plot histories)."""
from fe_core.summary.summary import Summary, ValWithError
from fe_core.summary.system import System
from fe.summary import logs, plot, summary, system

__all__ = ["Summary", "System", "ValWithError", "logs", "plot", "summary", "system"]
