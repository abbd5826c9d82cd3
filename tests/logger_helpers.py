"""A Logger run by hand, shared by the suites' tests of what it prints (tests/core, tests/torch, tests/tf).
Framework-free (fe_core only): the values given are the caller's own (numpy, torch or tf)."""
from __future__ import annotations

from typing import Any, Dict

from fe_core.data import Data
from fe_core.summary.summary import Summary
from fe_core.summary.system import System
from fe_core.trace import Logger


def log_eval_epoch(values: Dict[str, Any], step: int) -> System:
    """Write `values` with log into one Data and end an eval epoch (epoch 1, global step `step`) of a Logger with
    them: the Logger prints its one line (read it with capsys). Returns the System, whose summary holds the values."""
    system = System(network=None, pipeline=None, traces=[], mode="eval", log_steps=1, total_epochs=1)
    system.summary = Summary("review")
    system.global_step, system.epoch_idx = step, 1
    logger = Logger()
    logger.system = system
    data = Data()
    for key, value in values.items():
        data.write_with_log(key, value)
    logger.on_epoch_end(data)
    return system
