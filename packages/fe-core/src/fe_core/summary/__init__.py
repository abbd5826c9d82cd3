"""Experiment records (`Summary`, `ValWithError`) and the shared run state (`System`)."""
from fe_core.summary.summary import Summary, ValWithError
from fe_core.summary.system import System

__all__ = ["Summary", "ValWithError", "System"]
