"""FastEstimator's documented trace behaviour that needs no framework (issue 28): metric traces driven directly
without a System, the trace state FastEstimator exposes, metric arguments."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.trace.metric import (MCC, Accuracy, AUCScore, BleuScore, CalibrationError, ConfusionMatrix, Dice,
                                  F1Score, Precision, Recall)
from fe_core.trace.trace import current_ds_id

Y_TRUE = np.array([0, 1, 1, 0])
Y_PRED = np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.6, 0.4]])


def drive(trace: Any, *batches: Dict[str, Any]) -> Dict[str, Any]:
    """Run a trace's epoch hooks by hand, as FastEstimator users do in their unit tests; return what it logged."""
    trace.on_epoch_begin(Data())
    for batch in batches:
        trace.on_batch_end(Data(batch))
    data = Data()
    trace.on_epoch_end(data)
    return dict(data.read_logs())


# ------------------------------------------------------------------------------------------------ item 3
@pytest.mark.parametrize("trace, expected", [
    (Accuracy(true_key="y", pred_key="p"), {"accuracy": 1.0}),
    (AUCScore(true_key="y", pred_key="p"), {"auc": 1.0}),
    (MCC(true_key="y", pred_key="p"), {"mcc": 1.0}),
])
def test_metrics_run_without_a_system(trace: Any, expected: Dict[str, float]) -> None:
    assert current_ds_id(trace) == ""  # no System yet: the unnamed dataset
    logs = drive(trace, {"y": Y_TRUE, "p": Y_PRED})
    assert {key: float(value) for key, value in logs.items()} == pytest.approx(expected)


def test_class_score_bleu_dice_and_confusion_metrics_run_without_a_system() -> None:
    for trace in (F1Score(true_key="y", pred_key="p"), Precision(true_key="y", pred_key="p"),
                  Recall(true_key="y", pred_key="p")):
        assert np.asarray(next(iter(drive(trace, {"y": Y_TRUE, "p": Y_PRED}).values()))).tolist() == [1.0, 1.0]
    matrix = drive(ConfusionMatrix(true_key="y", pred_key="p", num_classes=2), {"y": Y_TRUE, "p": Y_PRED})
    assert np.asarray(matrix["confusion_matrix"]).tolist() == [[2, 0], [0, 2]]
    bleu = drive(BleuScore(true_key="y", pred_key="p", output_name="bleu"),
                 {"y": np.array([[[1, 2, 3, 4, 5]]]), "p": np.array([[1, 2, 3, 4, 5]])})
    assert float(bleu["bleu"]) == pytest.approx(1.0)
    dice = drive(Dice(true_key="y", pred_key="p"), {"y": np.ones((2, 4, 4, 1)), "p": np.ones((2, 4, 4, 1))})
    assert float(dice["Dice"]) == pytest.approx(1.0)
    calibration = drive(CalibrationError(true_key="y", pred_key="p"), {"y": Y_TRUE, "p": Y_PRED})
    assert "calibration_error" in calibration
