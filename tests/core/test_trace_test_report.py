"""TestReport and TestCase: per-instance and aggregate tests, the JSON result and the LaTeX report."""
from __future__ import annotations

import json

import numpy as np
import pytest

from trace_helpers import make_system, run_epoch
from fe_core.data import Data
from fe_core.report import latex_document
from fe_core.trace.io.test_report import TestCase, TestReport


def _run(report, batches, end_values):
    system = make_system(report, mode="test")
    report.on_begin(Data())
    run_epoch(report, batches, mode="test", system=system, end_logs=end_values)  # aggregate tests read metrics
    report.on_end(Data())


def test_report_json_has_aggregate_and_per_instance_results(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(latex_document, "latex_compiler", lambda: None)
    cases = [TestCase("accuracy above 0.9", lambda accuracy: accuracy > 0.9),
             TestCase("loss below 1", lambda loss: loss < 1.0),
             TestCase("predictions are correct", lambda y, y_pred: y == y_pred, aggregate=False, fail_threshold=1)]
    report = TestReport(cases, save_path=str(tmp_path), test_title="digits", data_id="id")
    assert set(report.inputs) == {"accuracy", "loss", "y", "y_pred", "id"}
    batches = [{"y": [1, 2, 3], "y_pred": [1, 0, 3], "id": [10, 11, 12]},
               {"y": [4, 5], "y_pred": [0, 5], "id": [13, 14]}]
    _run(report, batches, {"accuracy": np.float32(0.95), "loss": 1.5})
    result = json.loads((tmp_path / "digits_TestReport.json").read_text())
    assert result["title"] == "digits"
    tests = {test["test_description"]: test for test in result["tests"]}
    assert tests["accuracy above 0.9"]["passed"] is True
    assert tests["accuracy above 0.9"]["inputs"] == {"accuracy": pytest.approx(0.95)}
    assert tests["loss below 1"]["passed"] is False
    per_instance = tests["predictions are correct"]
    assert per_instance["passed"] is False and per_instance["fail_number"] == 2
    assert per_instance["fail_id"] == [11, 13] and per_instance["test_type"] == "per-instance"
    tex = (tmp_path / "digits_TestReport.tex").read_text()
    assert "accuracy above 0.9" in tex and "accuracy=0.950" in tex and "failing id: 11, 13" in tex
    assert "only the .tex source was written" in capsys.readouterr().out


def test_test_case_and_report_argument_rules():
    with pytest.raises(ValueError, match="fail_threshold"):
        TestCase("x", lambda a: a, aggregate=True, fail_threshold=3)
    with pytest.raises(ValueError, match="TestCase"):
        TestReport([lambda a: a], save_path=".")
    assert TestReport(TestCase("x", lambda a: a), save_path=".").mode == {"test"}
    assert TestReport.sanitize_value(0.5) == "0.500" and TestReport.sanitize_value(1e-5) == "1.000e-05"


def test_check_pdf_dependency_raises_oserror_without_latex(monkeypatch):
    monkeypatch.setattr(latex_document, "latex_compiler", lambda: None)
    from fe_core.trace.io import test_report
    monkeypatch.setattr(test_report, "latex_compiler", lambda: None)
    with pytest.raises(OSError, match="LaTeX"):
        TestReport.check_pdf_dependency()


def test_report_state_keeps_case_results_for_a_checkpoint():
    from fe_core.checkpoint.object_state import get_object_state, set_object_state
    cases = [TestCase("ok", lambda y: y > 0, aggregate=False), TestCase("agg", lambda acc: acc > 0.5)]
    report = TestReport(cases, save_path=".", data_id="id")
    make_system(report, mode="test")
    report.on_batch_end(Data({"y": np.array([1, -1, 2]), "id": np.array([7, 8, 9])}))
    fresh = TestReport([TestCase("ok", lambda y: y > 0, aggregate=False), TestCase("agg", lambda acc: acc > 0.5)],
                       save_path=".", data_id="id")
    set_object_state(fresh, get_object_state(report))
    assert (fresh.instance_cases[0].fail_number, fresh.instance_cases[0].fail_id) == (1, [8])
    with pytest.raises(ValueError, match="test cases"):
        set_object_state(TestReport(TestCase("x", lambda a: a), save_path="."), get_object_state(report))
