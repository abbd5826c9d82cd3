"""Torch: the shape/value TensorOps and the extra losses, called directly (lazy build) and inside a TorchNetwork."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import (Argmax, CrossEntropy, DiceLoss, FocalLoss, Gather, Hinge, L2Regularizaton,
                                 MeanSquaredError, ModelOp, Normalize, Permute, Reshape, Resize3D, SuperLoss,
                                 TensorOp, UnHadamard, UpdateOp)
from fe_core.op.tensorop.hadamard import code_book

STATE: Dict[str, Any] = {"mode": "train", "warmup": False}


def _run(ops: List[TensorOp], batch: Dict[str, np.ndarray], mode: str = "train") -> Dict[str, Any]:
    network = make_network(ops=ops, default_backend="torch")
    with network(mode=mode, epoch=1):
        result = network.run_step(dict(batch))
    return {key: result[key] for key in result}


def test_a_kernel_op_builds_itself_from_torch_tensors_outside_a_network() -> None:
    op = Argmax(inputs="x", outputs="y", axis=-1)
    assert getattr(op, "framework", None) is None
    assert op.forward([torch.tensor([[0.1, 0.9], [0.8, 0.2]])], {})[0].tolist() == [1, 0]
    assert op.framework == "torch"
    with pytest.raises(TypeError, match="torch or TensorFlow"):
        Argmax(inputs="x", outputs="y").forward([np.zeros(3)], {})


def test_gather_with_and_without_indices() -> None:
    values = torch.tensor([[0, 1], [2, 3], [4, 5]])
    assert Gather(inputs="x", outputs="y", indices="i").forward([torch.tensor([1, 0, 1]), values],
                                                               STATE)[0].tolist() == [1, 2, 5]
    cube = torch.tensor([[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]])
    assert Gather(inputs="x", outputs="y", indices="i").forward([torch.tensor([[1], [0], [1]]), cube],
                                                               STATE)[0].tolist() == [[2, 3], [4, 5], [10, 11]]
    assert Gather(inputs="x", outputs="y").forward([values], STATE)[0].tolist() == [1, 3, 5]
    with pytest.raises(ValueError, match="one output per input"):
        Gather(inputs=["a", "b"], outputs="y")


def test_normalize_permute_reshape_in_a_network() -> None:
    x = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], dtype=np.float32)
    result = _run([Normalize(inputs="x", outputs="n", mean=(0.5, 0.625), std=(0.2795, 0.2795), max_pixel_value=8.0),
                   Permute(inputs="x", outputs="p", permutation=(2, 0, 1)),
                   Reshape(inputs="x", outputs="r", shape=(2, 4))], {"x": x})
    # torch images are (channels, height, width): channel 0 is x[0] (mean 4, std 2.236), channel 1 is x[1] (5, 2.236)
    np.testing.assert_allclose(result["n"], [[[-1.3416, -0.8944], [-0.4472, 0.0]], [[0.0, 0.4472],
                                                                                 [0.8944, 1.3416]]], atol=1e-3)
    np.testing.assert_array_equal(result["p"], np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(result["r"], x.reshape(2, 4))
    scalar = Normalize(inputs="x", outputs="y", mean=0.5625, std=0.2864, max_pixel_value=8.0).forward(
        [torch.from_numpy(x)], STATE)[0]
    np.testing.assert_allclose(scalar.numpy()[0, 0], [-1.52752516, -1.0910894], rtol=1e-4)
    with pytest.raises(ValueError, match="permutation"):
        Permute(inputs="x", outputs="y", permutation=(0, 0, 1))


@pytest.mark.parametrize("mode", ["nearest", "area"])
def test_resize3d_shapes_and_values(mode: str) -> None:
    volume = torch.arange(64, dtype=torch.float32).reshape(1, 1, 4, 4, 4)
    # one key (a string): forward takes and returns one tensor, as FastEstimator's Resize3D
    out = Resize3D(inputs="x", outputs="y", output_shape=(2, 2, 8), resize_mode=mode).forward(volume, STATE)
    assert out.shape == (1, 1, 2, 2, 8)
    if mode == "area":
        assert float(out[0, 0, 0, 0, 0]) == pytest.approx(float(volume[0, 0, :2, :2, 0].mean()))
    else:
        assert float(out[0, 0, 1, 1, 3]) == float(volume[0, 0, 2, 2, 1])
    with pytest.raises(ValueError, match="resize_mode"):
        Resize3D(inputs="x", outputs="y", output_shape=(2, 2, 2), resize_mode="cubic")


def test_un_hadamard_decodes_code_words() -> None:
    codes = torch.from_numpy(code_book(5, 8))
    probs = UnHadamard(inputs="x", outputs="y", n_classes=5).forward([codes * 0.9], STATE)[0]
    assert probs.shape == (5, 5)
    assert probs.argmax(dim=-1).tolist() == [0, 1, 2, 3, 4]
    torch.testing.assert_close(probs.sum(dim=-1), torch.ones(5))
    assert UnHadamard(inputs="x", outputs="y", n_classes=5).code_length == 8
    with pytest.raises(ValueError, match="power of 2"):
        UnHadamard(inputs="x", outputs="y", n_classes=5, code_length=12)


def test_hinge_and_focal_loss_match_the_documented_values() -> None:
    true = torch.tensor([[-1, 1, 1, -1], [1, 1, 1, 1], [-1, -1, 1, -1], [1, -1, -1, -1]])
    pred = torch.tensor([[0.1, 0.9, 0.05, 0.05], [0.1, -0.2, 0.0, -0.7], [0.0, 0.15, 0.8, 0.05],
                         [1.0, -1.0, -1.0, -1.0]])
    hinge = Hinge(inputs=("p", "t"), outputs="l", average_loss=False).forward([pred, true], STATE)
    np.testing.assert_allclose(hinge.numpy(), [0.8, 1.2, 0.85, 0.0], atol=1e-6)
    true = torch.tensor([[1], [1], [1], [0], [0], [0]])
    pred = torch.tensor([[0.97], [0.91], [0.73], [0.27], [0.09], [0.03]])
    plain = FocalLoss(inputs=("p", "t"), outputs="l", gamma=None, alpha=None).forward([pred, true], STATE)
    focal = FocalLoss(inputs=("p", "t"), outputs="l").forward([pred, true], STATE)
    assert float(plain) == pytest.approx(0.1464, abs=2e-4)
    assert float(focal) == pytest.approx(0.00395, abs=5e-5)
    logits = FocalLoss(inputs=("p", "t"), outputs="l", from_logits=True).forward([torch.logit(pred), true], STATE)
    assert float(logits) == pytest.approx(float(focal), rel=1e-4)
    with pytest.raises(ValueError, match="reduction"):
        FocalLoss(inputs=("p", "t"), outputs="l", sample_reduction="max")


def test_dice_loss_matches_the_documented_scores() -> None:
    true = torch.tensor([[[[0, 1, 1], [1, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [1, 0, 1]],
                          [[0, 1, 1], [1, 0, 1], [1, 0, 1]]]])
    pred = torch.tensor([[[[0, 1, 0], [1, 0, 0], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [0, 0, 0]],
                          [[0, 0, 1], [1, 0, 1], [1, 0, 1]]]])
    per_channel = DiceLoss(inputs=("p", "t"), outputs="l", channel_average=False,
                           average_loss=False).forward([pred, true], STATE)
    np.testing.assert_allclose(1 - per_channel.numpy(), [[0.8, 0.8, 0.9090908]], rtol=1e-5)
    averaged = DiceLoss(inputs=("p", "t"), outputs="l").forward([pred, true], STATE)
    assert 1 - float(averaged) == pytest.approx(0.83636354, rel=1e-5)
    weighted = DiceLoss(inputs=("p", "t"), outputs="l", channel_weights={2: 0.0}, channel_average=False,
                        average_loss=False).forward([pred, true], STATE)
    assert float(weighted[0, 2]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="channel_weights"):
        DiceLoss(inputs=("p", "t"), outputs="l", channel_weights={"a": 1.0})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="y_pred, y_true"):  # checked when the op joins a Network
        make_network(ops=[DiceLoss(inputs=("p", ), outputs="l")], default_backend="torch")


def test_l2_regularization_adds_half_the_squared_weights() -> None:
    model = build(model_fn=lambda: torch.nn.Linear(3, 2), optimizer_fn="sgd")
    expected = sum(float((p.detach()**2).sum()) for p in model.parameters()) / 2
    op = L2Regularizaton(inputs="ce", outputs="l", model=model, beta=0.1)
    assert float(op.forward(torch.tensor(1.0), STATE).detach()) == pytest.approx(1.0 + 0.1 * expected, rel=1e-5)


def test_super_loss_trains_and_keeps_its_moving_average_in_checkpoint_state() -> None:
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Softmax(dim=-1)),
                  optimizer_fn="sgd")
    loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"), output_confidence="confidence")
    assert loss.inputs == ["y_pred", "y"] and loss.outputs == ["ce", "confidence"]
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"), loss,
                                UpdateOp(model=model, loss_name="ce")])
    rng = np.random.default_rng(0)
    batch = {"x": rng.normal(size=(8, 4)).astype(np.float32), "y": rng.integers(0, 3, 8)}
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    assert np.isfinite(result["ce"]) and result["confidence"].shape == (8, )
    state = loss.get_state()
    initialized, tau = state["tau"]["train"]
    assert initialized == 1.0 and 0.5 < tau < 2.0  # the mean cross entropy of a fresh 3-class model
    assert state["tau"]["eval"][0] == 0.0
    fresh = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    fresh.set_state(state)
    fresh.build("torch")
    assert fresh.get_state()["tau"]["train"] == pytest.approx([1.0, tau])
    with pytest.raises(ValueError, match="regularization"):
        SuperLoss(CrossEntropy(inputs=("a", "b"), outputs="c"), regularization=0)
    with pytest.raises(ValueError, match="threshold"):
        SuperLoss(CrossEntropy(inputs=("a", "b"), outputs="c"), threshold="mean")


def test_constant_threshold_super_loss_is_zero_where_the_loss_equals_tau() -> None:
    op = SuperLoss(MeanSquaredError(inputs=("p", "t"), outputs="l"), threshold=1.0, average_loss=False)
    out = op.forward([torch.tensor([[1.0], [3.0]]), torch.tensor([[0.0], [3.0]])], STATE)
    assert float(out[0]) == pytest.approx(0.0, abs=1e-6)  # loss 1 == tau: sigma = 1, super loss 0
    assert float(out[1]) < 0.0  # an easy sample (loss 0 < tau) gets a negative super loss
