"""UpdateOp on torch: exact SGD steps, merge_grad accumulation (loss and gradients inputs), gradient isolation between
models, warmup, and errors."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from torch_helpers import assert_same_tensors, parameters_of

LR = 0.1


def linear_model(name: str = "linear", lr: float = LR) -> Any:
    return build(model_fn=lambda: torch.nn.Linear(3, 2), optimizer_fn=lambda p: torch.optim.SGD(p, lr=lr),
                 model_name=name)


def make_batches(count: int, seed: int = 0) -> List[Dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.normal(size=(4, 3)).astype(np.float32), "y": rng.normal(size=(4, 2)).astype(np.float32)}
            for _ in range(count)]


def reference_gradients(model: torch.nn.Module, batch: Dict[str, np.ndarray]) -> List[torch.Tensor]:
    """d(mean squared error)/d(parameters) at the model's current weights, computed by hand with torch."""
    pred = model(torch.from_numpy(batch["x"]))
    loss = ((pred - torch.from_numpy(batch["y"]))**2).mean()
    return [g.detach() for g in torch.autograd.grad(loss, list(model.parameters()))]


def run_steps(network: Any, batches: List[Dict[str, np.ndarray]], warmup: bool = False) -> None:
    with network(mode="train", epoch=1, warmup=warmup):
        for batch in batches:
            network.run_step(dict(batch))


def loss_update_network(model: Any, merge_grad: int) -> Any:
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                             UpdateOp(model=model, loss_name="mse", merge_grad=merge_grad)])


def gradient_update_network(model: Any, merge_grad: int) -> Any:
    gradients = LambdaOp(fn=lambda loss: torch.autograd.grad(loss, list(model.parameters())), inputs="mse",
                         outputs="grads")
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                             gradients,
                             UpdateOp(model=model, gradients="grads", merge_grad=merge_grad)])


@pytest.mark.parametrize("make", [loss_update_network, gradient_update_network], ids=["loss", "gradients"])
@pytest.mark.parametrize("merge_grad", [1, 3])
def test_sgd_moves_weights_by_lr_times_mean_accumulated_gradient_every_merge_grad_steps(make: Any,
                                                                                        merge_grad: int) -> None:
    model = linear_model()
    network = make(model, merge_grad)
    batches = make_batches(2 * merge_grad)
    for window in range(2):
        start = parameters_of(model)
        window_batches = batches[window * merge_grad:(window + 1) * merge_grad]
        expected_grads = [reference_gradients(model, batch) for batch in window_batches]
        for index, batch in enumerate(window_batches):
            run_steps(network, [batch])  # one step per epoch context: accumulation survives across epochs
            if index < merge_grad - 1:
                assert_same_tensors(parameters_of(model), start)  # not yet
        for before, after, grads in zip(start, model.parameters(), zip(*expected_grads)):
            mean = torch.stack(grads).mean(dim=0)
            torch.testing.assert_close(after.detach(), before - LR * mean, rtol=1e-6, atol=1e-7)
        assert all(p.grad is None for p in model.parameters()), ".grad is only set for the optimizer step"


def test_warmup_steps_neither_update_nor_accumulate() -> None:
    model = linear_model()
    network = loss_update_network(model, merge_grad=2)
    initial = parameters_of(model)
    batches = make_batches(3)
    run_steps(network, batches, warmup=True)
    assert_same_tensors(parameters_of(model), initial)
    update = network.ops[-1]
    assert update.fe_backend_state.get("count", 0) == 0 and update.fe_backend_state.get("grads") is None
    run_steps(network, batches[:1])
    assert_same_tensors(parameters_of(model), initial)  # the first real step is the first of the merge window
    run_steps(network, batches[1:2])
    assert not torch.equal(initial[0], model.weight.detach())


def test_one_models_loss_never_touches_another_models_gradients() -> None:
    frozen = build(model_fn=lambda: torch.nn.Linear(2, 3), optimizer_fn="sgd", model_name="first")
    trained = linear_model("second")
    network = make_network(ops=[ModelOp(model=frozen, inputs="x", outputs="h"),
                                ModelOp(model=trained, inputs="h", outputs="y_pred"),
                                MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                                UpdateOp(model=trained, loss_name="mse")])
    frozen_before, trained_before = parameters_of(frozen), parameters_of(trained)
    rng = np.random.default_rng(0)
    run_steps(network, [{"x": rng.normal(size=(4, 2)).astype(np.float32),
                         "y": rng.normal(size=(4, 2)).astype(np.float32)}])
    assert_same_tensors(parameters_of(frozen), frozen_before)
    assert all(p.grad is None for p in frozen.parameters())
    assert not torch.equal(trained.weight.detach(), trained_before[0])


def test_update_of_a_model_without_optimizer_fails_in_warmup_naming_it() -> None:
    model = build(model_fn=lambda: torch.nn.Linear(3, 2), optimizer_fn=None, model_name="no_opt")
    network = loss_update_network(model, merge_grad=1)
    with pytest.raises(ValueError, match="no_opt.*no optimizer.*mode 'train', epoch 1"):
        run_steps(network, make_batches(1), warmup=True)


def test_loss_without_gradient_path_is_reported() -> None:
    model = linear_model("detached")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                LambdaOp(fn=lambda p, y: ((p.detach() - y)**2).mean(), inputs=("y_pred", "y"),
                                         outputs="mse"),
                                UpdateOp(model=model, loss_name="mse")])
    with pytest.raises(ValueError, match="'detached'.*'mse'.*no trainable tensor reaches the loss"):
        run_steps(network, make_batches(1))


def test_frozen_parameters_are_not_updated() -> None:
    model = linear_model("partly_frozen")
    model.bias.requires_grad_(False)
    network = loss_update_network(model, merge_grad=1)
    bias = model.bias.detach().clone()
    run_steps(network, make_batches(2))
    assert torch.equal(model.bias.detach(), bias)
    assert model.bias.grad is None
