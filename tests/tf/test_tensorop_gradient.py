"""TensorFlow: Watch, GradientOp and FGSM inside a TFNetwork (traced and eager), checked against GradientTape."""
from __future__ import annotations

from typing import Any, Dict

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import FGSM, Average, CrossEntropy, GradientOp, LambdaOp, ModelOp, UpdateOp, Watch


def _model() -> Any:
    keras.utils.set_random_seed(0)
    return build(model_fn=lambda: keras.Sequential([keras.Input((4, )), keras.layers.Dense(3, activation="softmax")]),
                 optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=0.1))


def _batch() -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"x": rng.normal(size=(5, 4)).astype(np.float32), "y": rng.integers(0, 3, 5)}


def _hand_loss(model: Any, x: tf.Tensor, y: np.ndarray) -> tf.Tensor:
    return tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, model(x)))


@pytest.mark.parametrize("eager", [False, True])
def test_gradient_op_wrt_a_watched_input_matches_the_tape(eager: bool) -> None:
    model = _model()
    batch = _batch()
    network = make_network(ops=[Watch(inputs="x"), ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                GradientOp(finals="ce", inputs="x", outputs="dx")])
    with network(mode="eval", epoch=1, eager=eager):
        result = network.run_step(dict(batch))
    x = tf.constant(batch["x"])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = _hand_loss(model, x, batch["y"])
    np.testing.assert_allclose(result["dx"], tape.gradient(loss, x).numpy(), rtol=1e-5, atol=1e-7)


def test_gradient_op_wrt_a_model_feeds_update_op() -> None:
    model, reference = _model(), _model()
    batch = _batch()
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                GradientOp(finals="ce", model=model, outputs="grads"),
                                UpdateOp(model=model, gradients="grads")])
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
    with tf.GradientTape() as tape:
        loss = _hand_loss(reference, batch["x"], batch["y"])
    grads = tape.gradient(loss, reference.trainable_variables)
    for variable, before, grad in zip(model.trainable_variables, reference.trainable_variables, grads):
        np.testing.assert_allclose(variable.numpy(), before.numpy() - 0.1 * grad.numpy(), rtol=1e-5, atol=1e-7)


def test_fgsm_adversarial_training_step_inside_the_traced_step() -> None:
    model = _model()
    batch = _batch()
    epsilon = 0.05
    network = make_network(ops=[
        Watch(inputs="x"),
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        FGSM(data="x", loss="ce", outputs="x_adv", epsilon=epsilon),
        ModelOp(model=model, inputs="x_adv", outputs="y_pred_adv"),
        CrossEntropy(inputs=("y_pred_adv", "y"), outputs="adv_ce"),
        Average(inputs=("ce", "adv_ce"), outputs="avg_ce"),
        UpdateOp(model=model, loss_name="avg_ce")])
    before = [v.numpy().copy() for v in model.trainable_variables]
    x = tf.constant(batch["x"])
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = _hand_loss(model, x, batch["y"])
    expected = np.clip(batch["x"] + epsilon * np.sign(tape.gradient(loss, x).numpy()), batch["x"].min(),
                       batch["x"].max())
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    assert network.trace_count == 1
    np.testing.assert_allclose(result["x_adv"], expected, rtol=1e-6)
    assert result["adv_ce"] > result["ce"]
    assert any(not np.array_equal(a, v.numpy()) for a, v in zip(before, model.trainable_variables))


def test_model_op_without_gradients_stops_the_gradient_path() -> None:
    model = _model()
    network = make_network(ops=[Watch(inputs="x"), ModelOp(model=model, inputs="x", outputs="y_pred", gradients=False),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                GradientOp(finals="ce", inputs="x", outputs="dx")])
    with network(mode="eval", epoch=1):
        result = network.run_step(dict(_batch()))
    np.testing.assert_array_equal(result["dx"], np.zeros((5, 4), np.float32))


def test_gradient_op_with_several_finals_inside_the_traced_step() -> None:
    model = _model()
    batch = _batch()
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                LambdaOp(fn=lambda ce: 3.0 * ce, inputs="ce", outputs="ce3"),
                                GradientOp(finals=["ce", "ce3"], model=model, outputs=["grads", "grads3"])])
    with network(mode="eval", epoch=1):  # the only gradient op: its tape is not persistent
        result = network.run_step(dict(batch))
    with tf.GradientTape() as tape:
        loss = _hand_loss(model, batch["x"], batch["y"])
    expected = tape.gradient(loss, model.trainable_variables)
    for got, got3, want in zip(result["grads"], result["grads3"], expected):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(np.asarray(got3), 3.0 * want.numpy(), rtol=1e-5, atol=1e-6)
