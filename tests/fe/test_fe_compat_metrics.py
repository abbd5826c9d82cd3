"""Metric arguments as FastEstimator documents them (issue 28, item 5): F1Score/Precision/Recall/MCC/ConfusionMatrix
hand their **kwargs to scikit-learn's functions through names in their own modules (so tests can patch them) and
refuse the arguments they pass themselves; on torch and TensorFlow tensors."""
from __future__ import annotations

from typing import Any, Dict
from unittest import mock

import numpy as np
import pytest
import sklearn.metrics
import tensorflow as tf
import torch

from fe.trace.metric import MCC, ConfusionMatrix, F1Score, Precision, Recall
from fe.util import Data

LABELS = [0, 1, 0, 1, 1]
SCORES = [[0.2], [0.6], [0.8], [0.1], [0.9]]  # predicted 0, 1, 1, 0, 1
WEIGHTS = [1.0, 2.0, 0.5, 1.0, 3.0]


def drive(trace: Any, batch: Dict[str, Any]) -> Dict[str, Any]:
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data(batch))
    data = Data()
    trace.on_epoch_end(data)
    return dict(data.read_logs())


@pytest.mark.parametrize("tensor", [torch.tensor, tf.constant])
@pytest.mark.parametrize("cls, function", [(F1Score, sklearn.metrics.f1_score),
                                           (Precision, sklearn.metrics.precision_score),
                                           (Recall, sklearn.metrics.recall_score)])
def test_class_scores_pass_kwargs_to_scikit_learn(tensor: Any, cls: Any, function: Any) -> None:
    trace = cls(true_key="y", pred_key="p", sample_weight=WEIGHTS)
    value = drive(trace, {"y": tensor(LABELS), "p": tensor(SCORES)})[trace.outputs[0]]
    expected = function(LABELS, [0, 1, 1, 0, 1], average="binary", sample_weight=WEIGHTS)
    assert float(value) == pytest.approx(expected)
    with pytest.raises(ValueError, match="average"):
        cls(true_key="y", pred_key="p", average="macro")


@pytest.mark.parametrize("tensor", [torch.tensor, tf.constant])
def test_mcc_and_confusion_matrix_call_their_module_names(tensor: Any) -> None:
    batch = {"label": tensor([0, 1, 0, 1]), "pred": tensor([[0.2], [0.6], [0.8], [0.1]])}
    with pytest.raises(ValueError):
        MCC(true_key="label", pred_key="pred", y_pred=None)
    with mock.patch("fe.trace.metric.mcc.matthews_corrcoef") as fake:
        drive(MCC(true_key="label", pred_key="pred", e1="extra1", e2="extra2"), batch)
    called = fake.call_args[1]
    assert called["e1"] == "extra1" and called["e2"] == "extra2"
    assert sorted(np.asarray(called["y_true"]).tolist()) == [0, 0, 1, 1]
    assert float(drive(MCC(true_key="label", pred_key="pred"), batch)["mcc"]) == pytest.approx(0.0)
    weighted = drive(MCC(true_key="label", pred_key="pred", sample_weight=[1.0, 2.0, 1.0, 1.0]), batch)["mcc"]
    assert weighted == pytest.approx(sklearn.metrics.matthews_corrcoef([0, 1, 0, 1], [0, 1, 1, 0],
                                                                       sample_weight=[1.0, 2.0, 1.0, 1.0]))
    with mock.patch("fe.trace.metric.confusion_matrix.confusion_matrix", return_value=np.eye(2)) as fake:
        logged = drive(ConfusionMatrix(true_key="label", pred_key="pred", num_classes=2), batch)
    assert fake.call_args[1]["labels"] == [0, 1] and np.asarray(logged["confusion_matrix"]).tolist() == [[1, 0],
                                                                                                         [0, 1]]
    matrix = drive(ConfusionMatrix(true_key="label", pred_key="pred", num_classes=2, normalize="true"), batch)
    assert np.asarray(matrix["confusion_matrix"]).tolist() == [[0.5, 0.5], [0.5, 0.5]]
