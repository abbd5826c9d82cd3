"""The torch kernels of the generic ops: losses against numpy references, argmax, ModelOp modes, inputs and
intermediate layers, gradient contexts, and what crosses between host and device."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import torch

import fe_torch.devices
from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import (Argmax, CrossEntropy, L1_Loss, LambdaOp, MeanSquaredError, ModelOp, UpdateOp)
from fe_torch.framework import TorchBackend

BACKEND = TorchBackend()
STATE = {"mode": "train", "warmup": False, "epoch": 1, "ds_id": "", "deferred": {}, "req_grad": False}


def run_loss(op: Any, pred: np.ndarray, true: np.ndarray) -> np.ndarray:
    op.build("torch")
    return op.forward([torch.from_numpy(pred), torch.from_numpy(true)], dict(STATE)).numpy()


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(6, 4)).astype(np.float32)
PROBS = softmax(LOGITS).astype(np.float32)
LABELS = np.array([0, 3, 1, 2, 3, 0])
ONEHOT = np.eye(4, dtype=np.float32)[LABELS]


@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("labels", [LABELS, LABELS.astype(np.uint8), LABELS.astype(np.int32)[:, None], ONEHOT],
                         ids=["sparse", "sparse_uint8", "sparse_int32_column", "categorical"])
def test_cross_entropy_matches_the_formula(from_logits: bool, labels: np.ndarray) -> None:
    pred = LOGITS if from_logits else PROBS
    expected = -np.log(PROBS[np.arange(6), LABELS])
    per_sample = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=from_logits, average_loss=False),
                          pred, labels)
    np.testing.assert_allclose(per_sample, expected, rtol=1e-5)
    mean = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=from_logits), pred, labels)
    assert mean.shape == () and np.isclose(mean, expected.mean(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(6, 1), (6,)])
@pytest.mark.parametrize("from_logits", [False, True])
def test_binary_cross_entropy_matches_the_formula(shape: tuple, from_logits: bool) -> None:
    logits = RNG.normal(size=shape).astype(np.float32)
    prob = 1 / (1 + np.exp(-logits))
    labels = (RNG.random(shape[0]) > 0.5).astype(np.float32)
    expected = -(labels * np.log(prob.reshape(-1)) + (1 - labels) * np.log(1 - prob.reshape(-1)))
    result = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=from_logits, average_loss=False),
                      logits if from_logits else prob.astype(np.float32), labels)
    np.testing.assert_allclose(result, expected, rtol=1e-4)


def test_cross_entropy_clamps_zero_probabilities() -> None:
    pred = np.array([[1.0, 0.0]], dtype=np.float32)
    result = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce"), pred, np.array([1]))
    assert np.isfinite(result) and np.isclose(result, -np.log(1e-7), rtol=1e-4)


def test_cross_entropy_class_weights_scale_each_sample_by_its_label() -> None:
    weights = {0: 2.0, 3: 0.5}
    plain = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce", average_loss=False), PROBS, LABELS)
    for labels in (LABELS, ONEHOT):
        weighted = run_loss(CrossEntropy(inputs=("p", "y"), outputs="ce", average_loss=False, class_weights=weights),
                            PROBS, labels)
        np.testing.assert_allclose(weighted, plain * np.array([weights.get(c, 1.0) for c in LABELS]), rtol=1e-5)


def test_cross_entropy_output_as_a_list_when_outputs_is_a_list() -> None:
    op = CrossEntropy(inputs=("p", "y"), outputs=["ce"])
    op.build("torch")
    result = op.forward([torch.from_numpy(PROBS), torch.from_numpy(LABELS)], dict(STATE))
    assert isinstance(result, list) and len(result) == 1 and result[0].shape == ()


def test_mean_squared_error_averages_non_batch_axes_then_the_batch() -> None:
    pred, true = RNG.normal(size=(5, 2, 3)).astype(np.float32), RNG.normal(size=(5, 2, 3)).astype(np.float32)
    per_sample = ((pred - true)**2).reshape(5, -1).mean(axis=1)
    np.testing.assert_allclose(
        run_loss(MeanSquaredError(inputs=("p", "y"), outputs="l", average_loss=False), pred, true), per_sample,
        rtol=1e-5)
    assert np.isclose(run_loss(MeanSquaredError(inputs=("p", "y"), outputs="l"), pred, true), per_sample.mean())


@pytest.mark.parametrize("loss_type", ["L1", "Smooth", "Huber"])
def test_l1_losses_match_their_formulas(loss_type: str) -> None:
    beta = 0.5
    pred = np.array([[0.0, 1.0, 3.0], [2.0, 2.1, -1.0]], dtype=np.float32)
    true = np.zeros_like(pred)
    d = np.abs(pred - true)
    if loss_type == "L1":
        element = d
    elif loss_type == "Smooth":
        element = np.where(d < beta, 0.5 * d**2 / beta, d - 0.5 * beta)
    else:
        element = np.where(d < beta, 0.5 * d**2, beta * (d - 0.5 * beta))
    result = run_loss(L1_Loss(inputs=("p", "y"), outputs="l", loss_type=loss_type, beta=beta, average_loss=False),
                      pred, true)
    np.testing.assert_allclose(result, element.mean(axis=1), rtol=1e-6)


def test_argmax_reduces_each_input_along_its_axis() -> None:
    op = Argmax(inputs=("a", "b"), outputs=("ia", "ib"), axis=-1)
    op.build("torch")
    a, b = torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([[1.0, 2.0, 3.0]])
    ia, ib = op.forward([a, b], dict(STATE))
    assert ia.tolist() == [1, 0] and ib.tolist() == [2]


class TwoInputs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
        self.head = torch.nn.Linear(3, 1)
        self.modes: List[bool] = []

    def forward(self, x: List[torch.Tensor]) -> torch.Tensor:  # ModelOp(inputs=("a", "b")) calls model([a, b])
        a, b = x
        self.modes.append(self.training)
        return self.head(self.body(a + b))


def two_input_model() -> Any:
    return build(model_fn=TwoInputs, optimizer_fn="sgd", model_name="two")


def run_network(network: Any, batch: Dict[str, np.ndarray], mode: str = "train") -> Any:
    with network(mode=mode, epoch=1):
        return network.run_step(dict(batch))


BATCH = {"a": np.ones((2, 2), dtype=np.float32), "b": np.zeros((2, 2), dtype=np.float32),
         "y": np.zeros((2, 1), dtype=np.float32)}


def test_model_op_passes_several_inputs_and_returns_intermediate_layers_by_name_and_index() -> None:
    model = two_input_model()
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs=("out", "hidden", "first"),
                                        intermediate_layers=["body.1", 0])])
    result = run_network(network, BATCH, mode="eval")
    with torch.no_grad():
        hidden = model.body(torch.ones(2, 2))
        first = model.body(torch.ones(2, 2))
    np.testing.assert_allclose(result["hidden"], hidden.numpy())
    np.testing.assert_allclose(result["first"], first.numpy())
    np.testing.assert_allclose(result["out"], model.head(hidden).detach().numpy(), rtol=1e-6)
    assert all(not hooks for m in model.modules() for hooks in [m._forward_hooks])  # hooks removed after the call


def test_model_op_rejects_an_unknown_layer_name() -> None:
    model = two_input_model()
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs=("out", "h"),
                                        intermediate_layers="nope")])
    with pytest.raises(ValueError, match="'two'.*no layer named 'nope'.*body"):
        run_network(network, BATCH, mode="eval")


def test_model_runs_in_training_mode_only_in_train_mode_and_when_trainable(monkeypatch: pytest.MonkeyPatch) -> None:
    model = two_input_model()
    calls: List[bool] = []
    original = torch.nn.Module.train
    monkeypatch.setattr(torch.nn.Module, "train",
                        lambda self, mode=True: (calls.append(mode) if self is model else None) or original(self, mode))
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs="p"),
                                ModelOp(model=model, inputs=("a", "b"), outputs="q", trainable=False, mode="train")])
    for _ in range(3):
        run_network(network, BATCH, mode="eval")
    assert model.modes == [False] * 3
    model.modes.clear()
    for _ in range(2):
        run_network(network, BATCH, mode="train")
    assert model.modes == [True, False, True, False]
    # train()/eval() are called only when the mode changes: eval (from the initial train mode), then per switch
    assert calls == [False, True, False, True, False]


def test_no_grad_unless_an_op_needs_gradients_and_outputs_are_detached() -> None:
    model = two_input_model()
    seen: List[bool] = []
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs="p"),
                                LambdaOp(fn=lambda p: seen.append(torch.is_grad_enabled()), inputs="p"),
                                MeanSquaredError(inputs=("p", "y"), outputs="mse"),
                                UpdateOp(model=model, loss_name="mse")])
    with network(mode="eval", epoch=1):
        network.run_step(dict(BATCH))
    with network(mode="train", epoch=1):
        predictions = network._run_step(network._device_batch(BATCH))
    assert seen == [False, True]
    assert isinstance(predictions["p"], torch.Tensor) and not predictions["p"].requires_grad


def test_only_the_inputs_ops_read_go_to_the_device_and_only_read_outputs_come_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    model = two_input_model()
    network = make_network(ops=[ModelOp(model=model, inputs=("a", "b"), outputs="p"),
                                MeanSquaredError(inputs=("p", "y"), outputs="mse")])
    moved, converted = [], []
    device_batch, to_numpy = network._device_batch, fe_torch.devices.to_numpy
    monkeypatch.setattr(network, "_device_batch", lambda batch: moved.append(dict(device_batch(batch))) or dict(
        moved[-1]))
    monkeypatch.setattr(fe_torch.devices, "to_numpy", lambda value: converted.append(value) or to_numpy(value))
    batch = dict(BATCH, unused=np.array(["a", "b"]), other=np.zeros((2, 5)))
    with network(mode="eval", epoch=1, desired_output_keys={"p", "mse"}):
        result = network.run_step(batch)
    [inputs] = moved
    assert sorted(inputs) == ["a", "b", "y"]  # 'unused' and 'other' are never converted
    for key, tensor in inputs.items():  # wrapped, not copied, on the CPU
        assert isinstance(tensor, torch.Tensor) and tensor.data_ptr() == BATCH[key].__array_interface__["data"][0]
    assert converted == []  # nothing read yet
    assert isinstance(result["mse"], np.ndarray) and len(converted) == 1
    assert result["unused"] is batch["unused"]
    assert len(converted) == 1  # 'p' was never read, so never copied


def test_a_label_of_minus_100_is_an_error_not_silently_ignored() -> None:
    from fe_core.framework import get_backend
    from fe_core.op.tensorop import CrossEntropy
    op = CrossEntropy(inputs=("p", "y"), outputs="ce", from_logits=True)
    op.build("torch")
    with pytest.raises((IndexError, RuntimeError)):
        op.forward([torch.randn(3, 4), torch.tensor([0, -100, 2])], {"mode": "train"})
    assert get_backend("torch").name == "torch"


def test_an_input_the_batch_lacks_is_reported_with_its_readers_and_context() -> None:
    network = make_network(ops=[ModelOp(model=two_input_model(), inputs=("a", "b"), outputs="p"),
                                MeanSquaredError(inputs=("p", "y"), outputs="mse")])
    with network(mode="eval", epoch=2, ds_id=""):
        with pytest.raises(KeyError, match=r"ModelOp read\(s\) key 'b', which the batch does not have in mode 'eval', "
                                           r"epoch 2, ds_id ''; batch keys: \['a', 'y'\]"):
            network.run_step({"a": BATCH["a"], "y": BATCH["y"]})


class _OnDemandNode:
    """An autograd node's Python face as torch hands it out: every read of `next_functions` builds new wrappers, and
    a wrapper nobody holds is freed (so CPython may give its id to the next one)."""

    def __init__(self, edges: Dict[str, List[str]], leaves: Dict[str, Any], name: str) -> None:
        self.edges, self.leaves, self.name = edges, leaves, name
        self.variable = leaves.get(name)

    @property
    def next_functions(self) -> tuple:
        return tuple((_OnDemandNode(self.edges, self.leaves, child), 0) for child in self.edges.get(self.name, ()))


def test_the_update_check_finds_a_deep_path_through_wrappers_made_on_demand() -> None:
    """The reach check must not lose a path when a freed wrapper's id comes back for another node (seen on CUDA:
    the walk then missed the weights and ran a whole backward pass)."""
    from fe_torch.kernels import _graph_reaches  # pylint: disable=import-outside-toplevel
    weight = torch.nn.Parameter(torch.ones(1))
    edges = {f"n{i}": [f"n{i + 1}"] for i in range(30)}
    root = _OnDemandNode(edges, {"n30": weight}, "n0")
    assert _graph_reaches(root, [weight])
    assert not _graph_reaches(_OnDemandNode(edges, {"n30": weight}, "n0"), [torch.nn.Parameter(torch.ones(1))])
