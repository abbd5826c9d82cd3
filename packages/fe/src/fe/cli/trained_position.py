"""Where the training that `fe test` tests had got to: the global step and epoch of its last logged row.

`fe test` builds a fresh Estimator, which has trained no step. Its test line and its CSVLogger row would say
`step: 0` (and the epoch `total_epochs`), beside the fit's own `test,120,3,...` row. When the Estimator has a
CSVLogger whose file the fit wrote, its last training or evaluation row says where the fit ended; `fe test` starts
the test there, so the test line reads `step: 120; epoch: 3;` and the row `test,120,3,...`, as after the fit.
"""
from __future__ import annotations

import csv
import os
from typing import Any, Optional, Tuple

from fe_core.schedule import get_current_items
from fe_core.trace.io.csv_logger import CSVLogger

__all__ = ["trained_position", "start_test_at_trained_position"]


def _position_in_log(filename: str) -> Optional[Tuple[int, int]]:
    try:
        with open(filename, newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
    except (OSError, csv.Error, UnicodeDecodeError):
        return None
    positions = []
    for row in rows:
        if row.get("mode") in ("train", "eval"):
            try:
                positions.append((int(row["step"]), int(row["epoch"])))
            except (KeyError, TypeError, ValueError):
                continue
    return max(positions) if positions else None


def trained_position(estimator: Any) -> Optional[Tuple[int, int]]:
    """(global step, epoch) of the last training or evaluation row in the files of the Estimator's CSVLoggers, or
    None when there is no such file."""
    found = [_position_in_log(trace.filename) for trace in get_current_items(getattr(estimator, "traces", []))
             if isinstance(trace, CSVLogger) and os.path.isfile(trace.filename)]
    found = [position for position in found if position is not None]
    return max(found) if found else None


def start_test_at_trained_position(estimator: Any) -> Optional[Tuple[int, int]]:
    """Set the Estimator's step and epoch to where its training ended (see `trained_position`), before `test()`.

    Returns:
        The (step, epoch) set, or None when it is unknown (the test line then reads `step: 0`, as in FastEstimator).
    """
    position = trained_position(estimator)
    system = getattr(estimator, "system", None)
    if position is None or system is None:
        return None
    system.global_step, system.epoch_idx = position
    system.stop_training = True  # `test()` keeps the epoch of a run that stopped (else it takes `total_epochs`)
    return position
