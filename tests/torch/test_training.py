"""End-to-end training with the torch backend: LeNet learns, schedules switch optimizers, GAN-style multi-model
updates, bf16 autocast on the CPU, warmup changes nothing, and models stay on their device."""
from __future__ import annotations

from typing import Any, List

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, LambdaOp, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace.trace import Trace
from fe_torch import LeNet, TorchNetwork
from torch_helpers import assert_same_tensors, image_task, optimizer_state_tensors, parameters_of


def accuracy(network: Any, x: np.ndarray, y: np.ndarray) -> float:
    result = network.transform({"x": x, "y": y}, mode="eval")
    return float(np.mean(np.argmax(result["y_pred"].numpy(), axis=-1) == y))


def lenet_network(model: Any) -> Any:
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                             UpdateOp(model=model, loss_name="ce")])


def test_lenet_learns_a_synthetic_image_task_above_90_percent() -> None:
    x, y = image_task(3000, seed=0)
    x_eval, y_eval = image_task(1000, seed=1)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x_eval, "y": y_eval}),
                        batch_size=32)
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = lenet_network(model)
    assert isinstance(network, TorchNetwork)
    before = accuracy(network, x_eval, y_eval)
    Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None).fit()  # 188 steps
    after = accuracy(network, x_eval, y_eval)
    assert before < 0.3, f"the task is trivial: an untrained LeNet scores {before:.2f}"
    assert after > 0.9, f"LeNet reached only {after:.3f} eval accuracy"


class RecordOptimizer(Trace):
    def __init__(self, model: Any) -> None:
        super().__init__(mode="train")
        self.model = model
        self.seen: List[Any] = []

    def on_epoch_end(self, data: Any) -> None:  # (at on_epoch_begin the network has not switched yet)
        self.seen.append((self.system.epoch_idx, type(self.model.current_optimizer).__name__,
                          self.system.network.backend.get_lr(self.model)))


def test_scheduled_optimizer_switches_at_its_epoch() -> None:
    x, y = image_task(64, seed=0)
    model = build(model_fn=LeNet, optimizer_fn=EpochScheduler({1: "sgd", 2: "adam"}))
    sgd, adam = model.optimizer.get_all_values()
    assert isinstance(sgd, torch.optim.SGD) and isinstance(adam, torch.optim.Adam)
    recorder = RecordOptimizer(model)
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16), network=lenet_network(model),
              epochs=3, traces=recorder, log_steps=None).fit()
    assert recorder.seen == [(1, "SGD", 0.01), (2, "Adam", 0.001), (3, "Adam", 0.001)]
    assert model.current_optimizer is adam
    # Adam took the 8 steps of epochs 2 and 3 (4 batches each), none of epoch 1's
    assert int(adam.state_dict()["state"][0]["step"]) == 8


def gan_models() -> Any:
    generator = build(model_fn=lambda: torch.nn.Linear(2, 4), optimizer_fn=lambda p: torch.optim.SGD(p, lr=0.1),
                      model_name="generator")
    discriminator = build(model_fn=lambda: torch.nn.Linear(4, 1), optimizer_fn=lambda p: torch.optim.SGD(p, lr=0.1),
                          model_name="discriminator")
    return generator, discriminator


def gan_network(generator: Any, discriminator: Any) -> Any:
    ones = lambda score: F.binary_cross_entropy_with_logits(score, torch.ones_like(score))  # noqa: E731
    zeros = lambda score: F.binary_cross_entropy_with_logits(score, torch.zeros_like(score))  # noqa: E731
    return make_network(ops=[
        ModelOp(model=generator, inputs="z", outputs="fake"),
        ModelOp(model=discriminator, inputs="fake", outputs="fake_score"),
        ModelOp(model=discriminator, inputs="real", outputs="real_score"),
        LambdaOp(fn=ones, inputs="fake_score", outputs="g_loss"),
        LambdaOp(fn=lambda fake, real: zeros(fake) + ones(real), inputs=("fake_score", "real_score"),
                 outputs="d_loss"),
        # the discriminator's update comes first: undeferred, its in-place step would break the generator's backward
        UpdateOp(model=discriminator, loss_name="d_loss"),
        UpdateOp(model=generator, loss_name="g_loss"),
    ])


def test_gan_style_two_model_update_is_deferred_and_trains_both() -> None:
    generator, discriminator = gan_models()
    network = gan_network(generator, discriminator)
    rng = np.random.default_rng(0)
    batch = {"z": rng.normal(size=(8, 2)).astype(np.float32), "real": rng.normal(2, 1, (8, 4)).astype(np.float32)}
    g_before, d_before = parameters_of(generator), parameters_of(discriminator)
    # expected first step, both gradients taken at the weights before the step
    z, real = torch.from_numpy(batch["z"]), torch.from_numpy(batch["real"])
    fake = generator(z)
    g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), torch.ones(8, 1))
    d_loss = (F.binary_cross_entropy_with_logits(discriminator(fake), torch.zeros(8, 1)) +
              F.binary_cross_entropy_with_logits(discriminator(real), torch.ones(8, 1)))
    g_grads = torch.autograd.grad(g_loss, list(generator.parameters()))
    d_grads = torch.autograd.grad(d_loss, list(discriminator.parameters()))
    update_ops = network.ops[-2:]
    with network(mode="train", epoch=1):
        assert all(op.defer for op in update_ops)
        network.run_step(dict(batch))
    assert not any(op.defer for op in update_ops), "the network must restore the ops' defer flags after the epoch"
    for before, grad, after in zip(g_before, g_grads, generator.parameters()):
        torch.testing.assert_close(after.detach(), before - 0.1 * grad)
    for before, grad, after in zip(d_before, d_grads, discriminator.parameters()):
        torch.testing.assert_close(after.detach(), before - 0.1 * grad)
    assert all(p.grad is None for p in [*generator.parameters(), *discriminator.parameters()])
    # and it keeps training through the Estimator
    data = NumpyDataset({"z": rng.normal(size=(64, 2)).astype(np.float32),
                         "real": rng.normal(2, 1, (64, 4)).astype(np.float32)})
    g_mid, d_mid = parameters_of(generator), parameters_of(discriminator)
    Estimator(pipeline=Pipeline(train_data=data, batch_size=8), network=network, epochs=2, log_steps=None).fit()
    assert not torch.equal(g_mid[0], generator.weight.detach())
    assert not torch.equal(d_mid[0], discriminator.weight.detach())


def test_bf16_autocast_on_cpu_runs_and_trains() -> None:
    x, y = image_task(1024, seed=0, noise=1.0)
    x_eval, y_eval = image_task(256, seed=1, noise=1.0)
    model = build(model_fn=LeNet, optimizer_fn="adam", mixed_precision=True)
    assert model.mixed_precision and model.current_optimizer.scaler is None  # no loss scaling for bf16
    dtypes = []
    network = make_network(ops=[
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        LambdaOp(fn=lambda p: dtypes.append(p.dtype), inputs="y_pred", mode="train"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        UpdateOp(model=model, loss_name="ce"),
    ])
    before = accuracy(network, x_eval, y_eval)
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=32), network=network, epochs=2,
              log_steps=None).fit()
    assert set(dtypes) == {torch.bfloat16}
    assert all(p.dtype == torch.float32 for p in model.parameters())
    result = network.transform({"x": x_eval, "y": y_eval}, mode="eval")
    assert result["y_pred"].dtype == torch.float32  # bf16 predictions come back as float32 (via the host)
    after = accuracy(network, x_eval, y_eval)
    assert after > max(0.6, before + 0.3), f"bf16 training went from {before:.2f} to only {after:.2f}"


class Snapshot(Trace):
    """Records the model's weights and optimizer state when training proper begins (after warmup)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def on_begin(self, data: Any) -> None:
        self.weights = parameters_of(self.model)
        self.optimizer_state = optimizer_state_tensors(self.model.current_optimizer)
        self.accumulated = dict(self.model.fe_update_states[0])


def test_warmup_changes_no_weight_and_no_optimizer_state() -> None:
    x, y = image_task(64, seed=0)
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce", merge_grad=2)])
    initial = parameters_of(model)
    snapshot = Snapshot(model)
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16), network=network, epochs=1,
              traces=snapshot, log_steps=None).fit()
    assert_same_tensors(snapshot.weights, initial)
    assert snapshot.optimizer_state == []
    assert snapshot.accumulated.get("count", 0) == 0 and snapshot.accumulated.get("grads") is None
    assert not all(torch.equal(a, b) for a, b in zip(initial, model.parameters())), "training itself must update"
    # as in FastEstimator, transform in train mode is a real step: the UpdateOp runs (merge_grad=2: every 2nd step)
    trained = parameters_of(model)
    network.transform({"x": x[:16], "y": y[:16]}, mode="train")
    network.transform({"x": x[16:32], "y": y[16:32]}, mode="train")
    assert not all(torch.equal(a, b) for a, b in zip(trained, model.parameters()))


def test_models_are_moved_to_the_device_once_at_build_not_per_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = image_task(32, seed=0)
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = lenet_network(model)
    device = network.device
    assert all(p.device == device for p in model.parameters())
    moves = []
    original = torch.nn.Module._apply

    def counting_apply(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:  # .to/.cuda/.cpu/.half all use it
        moves.append(type(self).__name__)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "_apply", counting_apply)
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x, "y": y}),
                                batch_size=16), network=network, epochs=3, log_steps=None).fit()
    assert moves == []
    assert all(p.device == device for p in model.parameters())
    assert all(t.device == device for t in optimizer_state_tensors(model.current_optimizer) if t.ndim)
