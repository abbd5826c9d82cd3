"""Review of issue 37 item 9: a logged number keeps numpy's notation for its type (what FastEstimator prints with
str()), with at most 7 significant digits, and fe's log parser reads every form back."""
import numpy as np
import pytest

from fe_core.summary.logs import parse_log_iter
from fe_core.summary.summary import Summary
from fe_core.trace.logger import readable_number

CASES = [(np.float16(0.1), "0.1"), (np.float32(2.3583345), "2.358335"), (12345678.9, "12345680.0"),
         (np.float32(123456789.0), "1.234568e+08"), (1e20, "1e+20"), (1e-05, "1e-05"), (-3.5e-07, "-3.5e-07"),
         (123456.75, "123456.8"), (1.0, "1.0"), (-0.0, "-0.0"), (np.int64(-4), "-4"), (float("nan"), "nan")]


@pytest.mark.parametrize("value, text", CASES, ids=[text for _, text in CASES])
def test_numbers_print_in_numpy_notation_with_seven_digits_and_parse_back(value, text):
    assert readable_number(value) == text
    parsed = parse_log_iter([f"FastEstimator-Eval: step: 3; epoch: 1; v: {text};"], Summary(None))
    got = parsed.history["eval"]["v"][3]
    assert got == pytest.approx(float(text), nan_ok=True)
    assert float(text) == pytest.approx(float(np.asarray(value, dtype=np.float64)), rel=1e-3, nan_ok=True)


def test_a_value_with_error_prints_three_readable_numbers_that_parse_back(capsys):
    from fe_core.summary.summary import ValWithError
    from logger_helpers import log_eval_epoch
    error = ValWithError(0.12247449124543654, 0.41079192549707805, 0.6533567)
    system = log_eval_epoch({"calibration_error": error}, step=3)
    line = capsys.readouterr().out.strip()
    assert line == "FastEstimator-Eval: step: 3; epoch: 1; calibration_error: (0.1224745, 0.4107919, 0.6533567);"
    parsed = parse_log_iter([line], Summary(None)).history["eval"]["calibration_error"][3]
    assert tuple(parsed) == pytest.approx((0.1224745, 0.4107919, 0.6533567))
    assert system.summary.history["eval"]["calibration_error"][3].y == 0.41079192549707805  # every digit kept
