"""User mistakes on TensorFlow fail in the Estimator's warmup (graph and eager runs), before any training step, with
a message naming the op, the key or model, mode, epoch and ds_id, and what was expected: labels out of range for
CrossEntropy, a model fed the wrong width, MSE on class labels, an UpdateOp whose model the loss does not depend on.
The label check also holds inside a `tf.function` (as an assertion of the traced warmup step)."""
from __future__ import annotations

from typing import Any, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_tf.kernels import check_cross_entropy_labels


class StartRecorder(Trace):
    """Records whether training began (on_begin runs after the warmup)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: List[str] = []

    def on_begin(self, data: Data) -> None:
        self.events.append("begin")


def mlp(width: int = 4, classes: int = 10) -> keras.Model:
    return keras.Sequential([keras.Input((width,)), keras.layers.Dense(8, activation="relu"),
                             keras.layers.Dense(classes)])


def data(width: int = 4, labels: Any = None, n: int = 8) -> NumpyDataset:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, size=n) if labels is None else np.asarray(labels)
    return NumpyDataset({"x": rng.random((n, width)).astype(np.float32), "y": y})


def weights(model: keras.Model) -> List[np.ndarray]:
    return [np.array(value) for value in model.get_weights()]


def fit_fails(ops: List[Any], train: Any, eager: bool, eval_data: Any = None) -> None:
    recorder = StartRecorder()
    fit_fails.recorder = recorder  # type: ignore[attr-defined]
    pipeline = Pipeline(train_data=train, eval_data=eval_data, batch_size=4)
    Estimator(pipeline, make_network(ops), epochs=2, log_steps=None, traces=recorder).fit(eager=eager)


def assert_not_trained(model: keras.Model, before: List[np.ndarray]) -> None:
    for value, old in zip(model.get_weights(), before):
        np.testing.assert_array_equal(value, old)
    assert fit_fails.recorder.events == []  # type: ignore[attr-defined]


def classifier_ops(model: Any, loss: Any = None) -> List[Any]:
    return [ModelOp(model=model, inputs="x", outputs="y_pred"),
            loss or CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
            UpdateOp(model=model, loss_name="ce" if loss is None else loss.outputs[0])]


@pytest.mark.parametrize("eager", [False, True])
def test_label_equal_to_class_count_fails_in_warmup(eager: bool) -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(model), data(labels=[1, 2, 3, 10, 4, 5, 6, 7]), eager)
    message = str(info.value)
    assert "CrossEntropy (inputs ['y_pred', 'y']) got label 10 in 'y'" in message
    assert "for 10 classes" in message and "mode 'train', epoch 1, ds_id ''" in message
    assert "sparse labels must lie in 0..9" in message
    assert_not_trained(model, before)


def test_label_check_inside_tf_function_asserts() -> None:
    op = CrossEntropy(inputs=("y_pred", "y"), outputs="ce")
    state = {"mode": "train", "fe_epoch": 3, "ds_id": "ds1"}

    @tf.function
    def checked(pred: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        check_cross_entropy_labels(op, [pred, labels], state)
        return tf.reduce_sum(pred)

    pred = tf.zeros((2, 5))
    assert float(checked(pred, tf.constant([0, 4]))) == 0.0
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        checked(pred, tf.constant([0, 5]))
    message = str(info.value).replace("\\", "")  # TensorFlow escapes the quotes of an assertion's message
    assert ("CrossEntropy (inputs ['y_pred', 'y']): sparse labels in 'y' must lie in 0..4 for 5 classes in mode "
            "'train', epoch 3, ds_id 'ds1'") in message
    with pytest.raises(tf.errors.InvalidArgumentError, match="must lie in 0..4"):
        checked(pred, tf.constant([-1, 0]))


@pytest.mark.parametrize("eager", [False, True])
def test_wrong_input_width_names_model_op_shapes_and_expected_input(eager: bool) -> None:
    model = build(lambda: mlp(width=5), "adam", model_name="wide")
    before = weights(model)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(model), data(width=4), eager)
    message = str(info.value)
    assert "ModelOp (model 'wide', inputs ['x'], outputs ['y_pred']) failed in mode 'train', epoch 1, ds_id ''" \
        in message
    assert "on inputs 'x' shape (" in message and ", 4) float32" in message
    assert "Model 'wide' expects input of shape (None, 5)" in message
    assert_not_trained(model, before)


@pytest.mark.parametrize("eager", [False, True])
def test_mse_on_class_labels_suggests_cross_entropy(eager: bool) -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(model, MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")), data(), eager)
    message = str(info.value)
    assert "MeanSquaredError (inputs ['y_pred', 'y']) compares y_pred 'y_pred'" in message
    assert ", 10) float32) with y_true 'y' (shape (" in message
    assert "mode 'train', epoch 1, ds_id ''" in message and "use CrossEntropy(inputs=('y_pred', 'y'))" in message
    assert_not_trained(model, before)


@pytest.mark.parametrize("eager", [False, True])
def test_update_of_a_model_the_loss_does_not_depend_on_fails(eager: bool) -> None:
    used = build(lambda: mlp(), "adam", model_name="used")
    unused = build(lambda: mlp(), "adam", model_name="unused")
    before_used, before_unused = weights(used), weights(unused)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(used) + [UpdateOp(model=unused, loss_name="ce")], data(), eager)
    message = str(info.value)
    assert "UpdateOp (model 'unused', loss 'ce') in mode 'train', epoch 1, ds_id ''" in message
    assert "no gradient of 'ce' reaches any of model 'unused'" in message
    assert_not_trained(used, before_used)
    assert_not_trained(unused, before_unused)


def test_correct_training_passes_the_warmup_checks() -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    recorder = StartRecorder()
    Estimator(Pipeline(train_data=data(), eval_data=data(), batch_size=4), make_network(classifier_ops(model)),
              epochs=1, log_steps=None, traces=recorder).fit()
    assert recorder.events == ["begin"]
    assert any(not np.array_equal(value, old) for value, old in zip(model.get_weights(), before))
