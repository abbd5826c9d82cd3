"""Torch: Watch, GradientOp and FGSM inside a TorchNetwork, and their gradients checked by hand."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import (FGSM, Average, CrossEntropy, GradientOp, LambdaOp, ModelOp, UpdateOp, Watch)


def _linear(seed: int = 0) -> Any:
    torch.manual_seed(seed)
    return build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Softmax(dim=-1)),
                 optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.1))


def _batch() -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"x": rng.normal(size=(5, 4)).astype(np.float32), "y": rng.integers(0, 3, 5)}


def _hand_loss(model: Any, x: torch.Tensor, y: np.ndarray) -> torch.Tensor:
    return torch.nn.functional.nll_loss(torch.log(model(x).clamp(1e-7, 1.0)), torch.from_numpy(y))


def test_gradient_op_wrt_a_watched_input_matches_autograd() -> None:
    model = _linear()
    batch = _batch()
    network = make_network(ops=[Watch(inputs="x"), ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                GradientOp(finals="ce", inputs="x", outputs="dx")])
    with network(mode="eval", epoch=1):
        result = network.run_step(dict(batch))
    x = torch.from_numpy(batch["x"]).requires_grad_(True)
    expected = torch.autograd.grad(_hand_loss(model, x, batch["y"]), x)[0]
    np.testing.assert_allclose(result["dx"], expected.numpy(), rtol=1e-5, atol=1e-7)


def test_gradient_op_wrt_a_model_feeds_update_op() -> None:
    model, reference = _linear(), _linear()
    batch = _batch()
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                GradientOp(finals="ce", model=model, outputs="grads"),
                                UpdateOp(model=model, gradients="grads")])
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
    loss = _hand_loss(reference, torch.from_numpy(batch["x"]), batch["y"])
    grads = torch.autograd.grad(loss, list(reference.parameters()))
    for parameter, before, grad in zip(model.parameters(), reference.parameters(), grads):
        torch.testing.assert_close(parameter.detach(), (before - 0.1 * grad).detach())


def test_gradient_op_with_several_sources_and_finals() -> None:
    op = GradientOp(finals=["f", "g"], inputs=["a", "b"], outputs=["df", "dg"])
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    df, dg = op.forward([a, b, (a * b).sum(), a * a], {"mode": "train"})
    assert [t.tolist() for t in df] == [[3.0, 3.0], 3.0]
    assert dg[0].tolist() == [2.0, 4.0] and dg[1].item() == 0.0  # g does not depend on b: zeros
    with pytest.raises(ValueError, match="exactly one of inputs or model"):
        GradientOp(finals="f", outputs="df")


def test_fgsm_adversarial_training_step() -> None:
    model = _linear()
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
    before = [p.detach().clone() for p in model.parameters()]
    x = torch.from_numpy(batch["x"].copy()).requires_grad_(True)
    grad = torch.autograd.grad(_hand_loss(model, x, batch["y"]), x)[0]
    expected = torch.clamp(x.detach() + epsilon * grad.sign(), float(x.detach().min()), float(x.detach().max()))
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    np.testing.assert_allclose(result["x_adv"], expected.numpy(), rtol=1e-6)
    assert result["adv_ce"] > result["ce"]  # the attack increases the loss
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_fgsm_clips_to_the_given_range_and_needs_a_watched_input() -> None:
    x = torch.tensor([[0.0, 0.5, 1.0]], requires_grad=True)
    loss = (x * torch.tensor([[1.0, -1.0, 1.0]])).sum()
    out = FGSM(data="x", loss="l", outputs="a", epsilon=0.2, clip_low=0.1, clip_high=0.9).forward([x, loss], {})
    assert out.tolist() == [[pytest.approx(0.2), pytest.approx(0.3), pytest.approx(0.9)]]
    assert not out.requires_grad
    model = _linear()
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                FGSM(data="x", loss="ce", outputs="x_adv")])
    with network(mode="eval", epoch=1), pytest.raises(ValueError, match="Watch"):
        network.run_step(dict(_batch()))


def test_watch_rejects_integer_tensors() -> None:
    network = make_network(ops=[Watch(inputs="y"), LambdaOp(fn=lambda y: y, inputs="y", outputs="z")],
                           default_backend="torch")
    with network(mode="train", epoch=1), pytest.raises(TypeError, match="floating point"):
        network.run_step(dict(_batch()))


def test_model_op_without_gradients_records_nothing_for_backward() -> None:
    teacher, student = _linear(1), _linear(2)
    network = make_network(ops=[ModelOp(model=teacher, inputs="x", outputs="soft", gradients=False),
                                ModelOp(model=student, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "soft"), outputs="ce"),
                                UpdateOp(model=student, loss_name="ce")])
    teacher_before = [p.detach().clone() for p in teacher.parameters()]
    with network(mode="train", epoch=1):
        result = network.run_step(dict(_batch()))
    assert np.isfinite(result["ce"])
    assert all(torch.equal(a, b) for a, b in zip(teacher_before, teacher.parameters()))
    op = ModelOp(model=teacher, inputs="x", outputs="y", gradients=False)
    out = op.forward(torch.ones(2, 4), {"mode": "train"})
    assert not out.requires_grad
