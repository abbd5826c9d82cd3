"""TensorFlow: the shape/value TensorOps and the extra losses, called directly (lazy build) and inside a TFNetwork
(traced tf.function step)."""
from __future__ import annotations

from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import (Argmax, CrossEntropy, DiceLoss, FocalLoss, Gather, Hinge, L2Regularizaton,
                                 ModelOp, Normalize, Permute, Reshape, Resize3D, SuperLoss, TensorOp, UnHadamard,
                                 UpdateOp)
from fe_core.op.tensorop.hadamard import code_book
from fe_tf.tensorop.tensor_ops import resize_matrix

STATE: Dict[str, Any] = {"mode": "train", "warmup": False}


def _run(ops: List[TensorOp], batch: Dict[str, np.ndarray], eager: bool = False) -> Dict[str, Any]:
    network = make_network(ops=ops, default_backend="tf")
    with network(mode="train", epoch=1, eager=eager):
        result = network.run_step(dict(batch))
    if not eager:
        assert network.trace_count >= 1
    return {key: np.asarray(result[key]) for key in result}


def test_a_kernel_op_builds_itself_from_tf_tensors_outside_a_network() -> None:
    op = Argmax(inputs="x", outputs="y", axis=-1)
    assert op.forward([tf.constant([[0.1, 0.9], [0.8, 0.2]])], {})[0].numpy().tolist() == [1, 0]
    assert op.framework == "tf"


@pytest.mark.parametrize("eager", [False, True])
def test_gather_normalize_permute_reshape_in_a_network(eager: bool) -> None:
    x = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], dtype=np.float32)
    result = _run([Gather(inputs="x", outputs="g", indices="i"), Gather(inputs="x", outputs="m"),
                   Normalize(inputs="x", outputs="n", mean=(0.5, 0.625), std=(0.2795, 0.2795), max_pixel_value=8.0),
                   Permute(inputs="x", outputs="p", permutation=(2, 0, 1)),
                   Reshape(inputs="x", outputs="r", shape=(2, 4))], {"x": x, "i": np.array([1, 0])}, eager)
    np.testing.assert_array_equal(result["g"], [[3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(result["m"], [[3.0, 4.0], [7.0, 8.0]])
    np.testing.assert_allclose(result["n"][..., 0], [[-1.34164073, -0.44721358], [0.44721358, 1.34164073]],
                               rtol=1e-4)
    np.testing.assert_array_equal(result["p"], np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(result["r"], x.reshape(2, 4))


@pytest.mark.parametrize("mode", ["nearest", "area"])
def test_resize3d_matches_torch_semantics(mode: str) -> None:
    volume = np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4, 1)
    result = _run([Resize3D(inputs="x", outputs="y", output_shape=(2, 2, 8), resize_mode=mode)], {"x": volume})
    out = result["y"]
    assert out.shape == (1, 2, 2, 8, 1)
    if mode == "area":
        assert out[0, 0, 0, 0, 0] == pytest.approx(volume[0, :2, :2, 0, 0].mean())
    else:
        assert out[0, 1, 1, 3, 0] == volume[0, 2, 2, 1, 0]
    np.testing.assert_allclose(resize_matrix(2, 4, "area"), resize_matrix(2, 4, "nearest"))


def test_un_hadamard_decodes_code_words() -> None:
    codes = code_book(5, 8) * 0.9
    result = _run([UnHadamard(inputs="x", outputs="y", n_classes=5)], {"x": codes})
    assert result["y"].argmax(axis=-1).tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(result["y"].sum(axis=-1), 1.0, rtol=1e-5)


def test_losses_match_the_documented_values_inside_a_traced_step() -> None:
    hinge_true = np.array([[-1, 1, 1, -1], [1, 1, 1, 1], [-1, -1, 1, -1], [1, -1, -1, -1]], np.float32)
    hinge_pred = np.array([[0.1, 0.9, 0.05, 0.05], [0.1, -0.2, 0.0, -0.7], [0.0, 0.15, 0.8, 0.05],
                           [1.0, -1.0, -1.0, -1.0]], np.float32)
    focal_true = np.array([[1], [1], [1], [0], [0], [0]], np.float32)
    focal_pred = np.array([[0.97], [0.91], [0.73], [0.27], [0.09], [0.03]], np.float32)
    dice_true = np.array([[[[0, 1, 1], [1, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [1, 0, 1]],
                           [[0, 1, 1], [1, 0, 1], [1, 0, 1]]]], np.float32)
    dice_pred = np.array([[[[0, 1, 0], [1, 0, 0], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [0, 0, 0]],
                           [[0, 0, 1], [1, 0, 1], [1, 0, 1]]]], np.float32)
    result = _run([Hinge(inputs=("hp", "ht"), outputs="hinge", average_loss=False),
                   FocalLoss(inputs=("fp", "ft"), outputs="plain", gamma=None, alpha=None),
                   FocalLoss(inputs=("fp", "ft"), outputs="focal"),
                   DiceLoss(inputs=("dp", "dt"), outputs="dice_channels", channel_average=False, average_loss=False),
                   DiceLoss(inputs=("dp", "dt"), outputs="dice")],
                  {"hp": hinge_pred, "ht": hinge_true, "fp": focal_pred, "ft": focal_true, "dp": dice_pred,
                   "dt": dice_true})
    np.testing.assert_allclose(result["hinge"], [0.8, 1.2, 0.85, 0.0], atol=1e-6)
    assert float(result["plain"]) == pytest.approx(0.1464, abs=2e-4)
    assert float(result["focal"]) == pytest.approx(0.00395, abs=5e-5)
    np.testing.assert_allclose(1 - result["dice_channels"], [[0.9090908, 0.79999983, 0.79999995]], rtol=1e-5)
    assert 1 - float(result["dice"]) == pytest.approx(0.83636355, rel=1e-5)


def test_l2_regularization_adds_half_the_squared_weights() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((3, )), keras.layers.Dense(2)]), optimizer_fn="sgd")
    expected = sum(float(np.sum(v.numpy()**2)) for v in model.trainable_variables) / 2
    op = L2Regularizaton(inputs="ce", outputs="l", model=model, beta=0.1)
    assert float(op.forward(tf.constant(1.0), STATE)) == pytest.approx(1.0 + 0.1 * expected, rel=1e-5)


def test_super_loss_trains_in_a_traced_step_and_checkpoints_tau() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4, )), keras.layers.Dense(3, activation="softmax")]),
                  optimizer_fn="sgd")
    loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"), output_confidence="confidence")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"), loss,
                                UpdateOp(model=model, loss_name="ce")])
    rng = np.random.default_rng(0)
    batch = {"x": rng.normal(size=(8, 4)).astype(np.float32), "y": rng.integers(0, 3, 8)}
    with network(mode="train", epoch=1):
        first = network.run_step(dict(batch))
        tau_after_one = loss.get_state()["tau"]["train"][1]
        network.run_step(dict(batch))
    assert np.isfinite(first["ce"]) and np.asarray(first["confidence"]).shape == (8, )
    initialized, tau = loss.get_state()["tau"]["train"]
    assert initialized == 1.0 and 0.5 < tau_after_one < 2.0 and tau != tau_after_one  # the average moves
    fresh = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    fresh.set_state(loss.get_state())
    fresh.build("tf")
    assert fresh.get_state()["tau"]["train"] == pytest.approx([1.0, tau])


def test_l2_regularization_and_hinge_train_inside_the_traced_step() -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4, )), keras.layers.Dense(3)]),
                  optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=0.1))
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                Hinge(inputs=("y_pred", "y"), outputs="hinge"),
                                L2Regularizaton(inputs="hinge", outputs="loss", model=model, beta=0.5),
                                UpdateOp(model=model, loss_name="loss")])
    rng = np.random.default_rng(1)
    batch = {"x": rng.normal(size=(6, 4)).astype(np.float32),
             "y": np.where(rng.normal(size=(6, 3)) > 0, 1.0, -1.0).astype(np.float32)}
    weights = [v.numpy().copy() for v in model.trainable_variables]
    penalty = 0.5 * sum(float(np.sum(w**2)) for w in weights) / 2
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    assert float(result["loss"]) == pytest.approx(float(result["hinge"]) + penalty, rel=1e-5)
    assert network.trace_count == 1
    assert any(not np.array_equal(w, v.numpy()) for w, v in zip(weights, model.trainable_variables))
