"""The tf kernels of the generic loss ops and Argmax, checked against numpy formulas."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tensorflow as tf

from fe_core.op.tensorop import Argmax, CrossEntropy, L1_Loss, MeanSquaredError

STATE = {"mode": "train", "warmup": False, "epoch": 1, "ds_id": "", "deferred": {}}


def run(op: Any, *inputs: Any) -> np.ndarray:
    op.build(framework="tf")
    data = [tf.convert_to_tensor(value) for value in inputs]
    result = op.forward(data if op.in_list else data[0], STATE)
    return [value.numpy() for value in result] if isinstance(result, list) else result.numpy()


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


LOGITS = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [-2.0, 3.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
LABELS = np.array([0, 2, 1, 1])


@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("label_form", ["sparse", "sparse_column", "categorical"])
def test_cross_entropy_of_class_labels(from_logits: bool, label_form: str) -> None:
    probabilities = softmax(LOGITS)
    expected = -np.log(probabilities[np.arange(4), LABELS])
    labels = {"sparse": LABELS, "sparse_column": LABELS[:, None], "categorical": np.eye(3, dtype=np.float32)[LABELS]}
    prediction = LOGITS if from_logits else probabilities
    per_sample = run(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=from_logits, average_loss=False),
                     prediction, labels[label_form])
    np.testing.assert_allclose(per_sample, expected, rtol=1e-5)
    mean = run(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=from_logits), prediction, labels[label_form])
    np.testing.assert_allclose(mean, expected.mean(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(4,), (4, 1)])
def test_binary_cross_entropy_gives_one_loss_per_sample(shape: tuple) -> None:
    probabilities = np.array([0.9, 0.2, 0.6, 0.5], np.float32)
    labels = np.array([1, 0, 0, 1])
    expected = -(labels * np.log(probabilities) + (1 - labels) * np.log(1 - probabilities))
    per_sample = run(CrossEntropy(inputs=("p", "y"), outputs="ce", average_loss=False),
                     probabilities.reshape(shape), labels.reshape(shape))
    np.testing.assert_allclose(per_sample.reshape(-1), expected, rtol=1e-4)
    assert per_sample.shape[0] == 4


def test_class_weights_scale_each_sample_by_its_label() -> None:
    weights = {1: 2.0, 2: 0.5}
    expected = -np.log(softmax(LOGITS)[np.arange(4), LABELS]) * np.array([1.0, 0.5, 2.0, 2.0])
    per_sample = run(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=True, average_loss=False,
                                  class_weights=weights), LOGITS, LABELS)
    np.testing.assert_allclose(per_sample, expected, rtol=1e-5)


def test_mean_squared_error_averages_non_batch_axes_then_the_batch() -> None:
    prediction = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    target = np.ones((2, 3, 4), np.float32)
    expected = ((prediction - target) ** 2).reshape(2, -1).mean(axis=1)
    np.testing.assert_allclose(run(MeanSquaredError(inputs=("p", "y"), outputs="l", average_loss=False), prediction,
                                   target), expected, rtol=1e-6)
    np.testing.assert_allclose(run(MeanSquaredError(inputs=("p", "y"), outputs="l"), prediction, target),
                               expected.mean(), rtol=1e-6)


def test_mean_squared_error_accepts_integer_targets_without_the_trailing_axis() -> None:
    prediction = np.array([[0.5], [2.0]], np.float32)
    np.testing.assert_allclose(run(MeanSquaredError(inputs=("p", "y"), outputs="l", average_loss=False), prediction,
                                   np.array([1, 2])), [0.25, 0.0])


@pytest.mark.parametrize("loss_type", ["L1", "Smooth", "Huber"])
def test_l1_loss_variants(loss_type: str) -> None:
    beta = 0.5
    prediction = np.array([[0.1, 2.0], [-1.0, 0.3]], np.float32)
    target = np.zeros((2, 2), np.float32)
    error = np.abs(prediction - target)
    if loss_type == "L1":
        expected = error
    elif loss_type == "Smooth":
        expected = np.where(error < beta, 0.5 * error ** 2 / beta, error - 0.5 * beta)
    else:
        expected = np.where(error <= beta, 0.5 * error ** 2, beta * (error - 0.5 * beta))
    per_sample = run(L1_Loss(inputs=("p", "y"), outputs="l", loss_type=loss_type, beta=beta, average_loss=False),
                     prediction, target)
    np.testing.assert_allclose(per_sample, expected.mean(axis=1), rtol=1e-6)


def test_argmax_returns_one_index_tensor_per_input() -> None:
    first, second = run(Argmax(inputs=("a", "b"), outputs=("ia", "ib"), axis=-1), LOGITS, -LOGITS)
    np.testing.assert_array_equal(first, LOGITS.argmax(axis=-1))
    np.testing.assert_array_equal(second, (-LOGITS).argmax(axis=-1))


def test_float16_predictions_give_a_float32_loss() -> None:
    loss = run(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=True), LOGITS.astype(np.float16), LABELS)
    assert loss.dtype == np.float32
