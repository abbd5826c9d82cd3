"""ModelOp on Keras models (training flag, several inputs, intermediate layers) and generic ops in the traced step."""
from __future__ import annotations

from typing import Any

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import Average, Delete, LambdaOp, ModelOp, TensorOp

X = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)


def _dropout_model() -> keras.Model:
    return keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.9, name="drop"),
                             keras.layers.Dense(2, name="head")])


def _run(network: Any, mode: str, batch: dict, eager: bool = False) -> Any:
    with network(mode=mode, epoch=1, eager=eager):
        return network.run_step(dict(batch))


@pytest.mark.parametrize("eager", [False, True])
def test_models_run_in_training_mode_only_when_training_and_trainable(eager: bool) -> None:
    model = build(model_fn=_dropout_model, optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="train_out"),
                                ModelOp(model=model, inputs="x", outputs="frozen_out", trainable=False)])
    inference = model(X, training=False).numpy()
    train = _run(network, "train", {"x": X}, eager)
    assert not np.allclose(train["train_out"], inference)  # dropout active
    np.testing.assert_allclose(train["frozen_out"], inference, rtol=1e-6)
    evaluation = _run(network, "eval", {"x": X}, eager)
    np.testing.assert_allclose(evaluation["train_out"], inference, rtol=1e-6)


def test_intermediate_layers_by_name_and_index() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, name="hidden"),
                                                     keras.layers.Dense(2, name="head")]), optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs=("y", "h", "h0"),
                                        intermediate_layers=["hidden", 0])])
    result = _run(network, "eval", {"x": X})
    hidden = model.get_layer("hidden")(X).numpy()
    np.testing.assert_allclose(result["y"], model(X).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["h"], hidden, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["h0"], hidden, rtol=1e-5, atol=1e-6)
    bad = make_network(ops=[ModelOp(model=model, inputs="x", outputs=("y", "h"), intermediate_layers="nope")])
    with pytest.raises(ValueError, match="no layer 'nope'"):
        _run(bad, "eval", {"x": X})


def test_a_model_with_several_inputs_gets_them_as_a_list() -> None:
    def model_fn() -> keras.Model:
        first, second = keras.Input((4,)), keras.Input((4,))
        return keras.Model([first, second], keras.layers.Add()([first, second]))

    model = build(model_fn=model_fn, optimizer_fn=None)
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs="sum")])
    result = _run(network, "eval", {"a": X, "b": 2 * X})
    np.testing.assert_allclose(result["sum"], 3 * X, rtol=1e-6)


def test_lambda_average_and_delete_run_inside_the_traced_step() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(4)]), optimizer_fn=None)
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y"),
                                LambdaOp(fn=lambda y: tf.reduce_sum(y, axis=-1), inputs="y", outputs="total"),
                                Average(inputs=("x", "y"), outputs="mean"),
                                Delete(keys="y")])
    result = _run(network, "eval", {"x": X})
    prediction = model(X).numpy()
    np.testing.assert_allclose(result["total"], prediction.sum(axis=-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["mean"], (X + prediction) / 2, rtol=1e-5, atol=1e-6)
    assert "y" not in result


class EpochOp(TensorOp):
    """Writes the epoch from the step's state next to every sample."""

    def forward(self, data: Any, state: dict) -> Any:
        return tf.zeros_like(data[:, 0], dtype=tf.int64) + tf.cast(state["epoch"], tf.int64)


def test_the_epoch_reaches_traced_ops_as_a_tensor_without_retracing() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]), optimizer_fn=None)
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y"),
                                EpochOp(inputs="x", outputs="epoch")])
    seen = []
    for epoch in (1, 2, 3):
        with network(mode="eval", epoch=epoch):
            seen.append(int(network.run_step({"x": X})["epoch"][0]))
    assert seen == [1, 2, 3]
    assert network.trace_count == 1


def test_inputs_of_a_new_shape_get_their_own_trace_which_is_then_reused() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((None,)), keras.layers.Lambda(lambda t: t * 2)]),
                  optimizer_fn=None)
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y")])
    shapes = [(2, 3), (2, 5), (4, 3), (4, 5), (1, 3)]
    with network(mode="eval", epoch=1):
        results = [network.run_step({"x": np.ones(shape, np.float32)})["y"] for shape in shapes]
    assert [result.shape for result in results] == shapes
    assert all(np.all(result == 2) for result in results)
    assert network.trace_count == 2
