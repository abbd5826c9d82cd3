"""Experiment records (`Summary`, `ValWithError`, `average_summaries`), the shared run state (`System`), and the
run-history database (`fe_core.summary.history`, imported on use)."""
from fe_core.summary.summary import Summary, ValWithError, average_summaries
from fe_core.summary.system import System

__all__ = ["Summary", "ValWithError", "System", "average_summaries"]
