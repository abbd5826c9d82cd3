"""Issue 37 item 9: log lines print floating-point values with a readable number of significant digits
(`accuracy: 0.2423398`, not `accuracy: 0.24233983286908078`), the Summary keeps every digit, and the log parser
behind `fe logs` reads every printed form back."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.summary.logs import parse_log_text
from fe_core.summary.summary import Summary
from fe_core.summary.system import System
from fe_core.trace import Logger

VALUES = {"accuracy": np.float64(0.24233983286908078), "digitnet_lr": 0.00025075000000000005,
          "digitnet_export_diff": 7.450580596923828e-09, "ce": np.float32(2.3025851), "count": np.int64(12),
          "big": 123456789.123, "steps/sec": 608.14}


def printed_line(capsys) -> tuple:
    system = System(network=None, pipeline=None, traces=[], mode="eval", ds_id="", num_devices=0, log_steps=20,
                    total_epochs=2)
    system.summary = Summary("exp")
    system.global_step, system.epoch_idx = 40, 1
    logger = Logger()
    logger.system = system
    data = Data()
    for key, value in VALUES.items():
        data.write_with_log(key, value)
    logger.on_epoch_end(data)
    return capsys.readouterr().out.strip(), system.summary.history["eval"]


def test_floats_print_with_seven_significant_digits(capsys):
    line, _ = printed_line(capsys)
    assert line == ("FastEstimator-Eval: step: 40; epoch: 1; accuracy: 0.2423398; big: 123456800.0; ce: 2.302585; "
                    "count: 12; digitnet_export_diff: 7.450581e-09; digitnet_lr: 0.00025075; steps/sec: 608.14;")


def test_the_summary_keeps_every_digit_and_the_log_parser_reads_the_line_back(capsys):
    line, history = printed_line(capsys)
    assert history["accuracy"][40] == 0.24233983286908078
    parsed = parse_log_text(line + "\n").history["eval"]
    assert parsed["count"][40] == 12
    for key in ("accuracy", "digitnet_lr", "digitnet_export_diff", "ce", "big", "steps/sec"):
        assert parsed[key][40] == pytest.approx(float(VALUES[key]), rel=1e-6), key
