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
