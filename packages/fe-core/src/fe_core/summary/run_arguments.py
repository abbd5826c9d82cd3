"""The arguments a run's `get_estimator` was called with, as `fe train` / `fe test` parsed them.

The command line records them here (`set_run_arguments`) right before calling the script's `get_estimator(**args)`;
experiment trackers (`MLflowLogger`) read them (`run_arguments`) to log a run's hyperparameters. A script run with
plain `python script.py` records nothing, and `run_arguments()` is empty.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

__all__ = ["set_run_arguments", "run_arguments"]

_arguments: Dict[str, Any] = {}


def set_run_arguments(arguments: Optional[Mapping[str, Any]]) -> None:
    """Record the keyword arguments `get_estimator` is called with (None clears them).

    Example:
        >>> set_run_arguments({"epochs": 2, "batch_size": 32}); run_arguments()["epochs"]
        2
        >>> set_run_arguments(None); run_arguments()
        {}
    """
    _arguments.clear()
    if arguments:
        _arguments.update(dict(arguments))


def run_arguments() -> Dict[str, Any]:
    """A copy of the recorded `get_estimator` arguments ({} when the script was not started by `fe train`)."""
    return dict(_arguments)
