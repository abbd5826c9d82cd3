"""Saving and loading torch models and optimizers, learning rates, random state, and checkpoints through System."""
from __future__ import annotations

import os
import pickle
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.checkpoint.codec import StateCodec
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_torch import LeNet
from torch_helpers import assert_same_tensors, image_task, optimizer_state_tensors, parameters_of

BACKEND = get_backend("torch")


def lenet_network(model: Any, merge_grad: int = 1) -> Any:
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                             UpdateOp(model=model, loss_name="ce", merge_grad=merge_grad)])


def train_steps(network: Any, batches: List[Dict[str, np.ndarray]], epoch: int = 1) -> None:
    with network(mode="train", epoch=epoch):
        for batch in batches:
            network.run_step(dict(batch))


def image_batches(count: int, seed: int = 0) -> List[Dict[str, np.ndarray]]:
    x, y = image_task(16 * count, seed=seed)
    return [{"x": x[i:i + 16], "y": y[i:i + 16]} for i in range(0, 16 * count, 16)]


def predict(network: Any, x: np.ndarray) -> np.ndarray:
    return network.transform({"x": x, "y": np.zeros(len(x), dtype=np.int64)}, mode="eval")["y_pred"]


def test_save_then_load_gives_identical_predictions_and_optimizer_state(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="lenet")
    network = lenet_network(model)
    train_steps(network, image_batches(3))
    files = BACKEND.save_model(model, str(tmp_path), save_optimizer=True)
    assert files == ["lenet.pt", "lenet_opt.pt"]
    assert sorted(os.listdir(tmp_path)) == ["lenet.pt", "lenet_opt.pt"]  # no temporary leftovers

    fresh = build(model_fn=LeNet, optimizer_fn="adam", model_name="lenet")
    fresh_network = lenet_network(fresh)
    x = image_batches(1, seed=5)[0]["x"]
    assert not np.array_equal(predict(fresh_network, x), predict(network, x))
    BACKEND.load_model(fresh, str(tmp_path), load_optimizer=True)
    np.testing.assert_array_equal(predict(fresh_network, x), predict(network, x))
    assert_same_tensors(optimizer_state_tensors(fresh.current_optimizer), optimizer_state_tensors(model.current_optimizer))
    assert len(optimizer_state_tensors(model.current_optimizer)) == 3 * len(list(model.parameters()))
    # and both continue identically
    more = image_batches(2, seed=7)
    train_steps(network, more)
    train_steps(fresh_network, more)
    assert_same_tensors(parameters_of(fresh), parameters_of(model))


def test_saved_files_are_plain_tensor_data_loadable_with_weights_only(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="m")
    BACKEND.save_model(model, str(tmp_path), save_optimizer=True)
    weights = torch.load(tmp_path / "m.pt", weights_only=True)
    assert set(weights) == set(model.state_dict())
    optimizer = torch.load(tmp_path / "m_opt.pt", weights_only=True)
    assert optimizer["format"] == "fe_torch.optimizer" and len(optimizer["optimizers"]) == 1


class Payload:
    def __reduce__(self) -> Any:
        return (os.system, ("echo pwned",))


def test_loading_never_runs_code_from_the_file(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="evil")
    torch.save({"conv1.weight": Payload()}, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match=r"evil\.pt'.*damaged or not a weights-only torch file") as caught:
        BACKEND.load_model(model, str(tmp_path), load_optimizer=False)
    assert isinstance(caught.value.__cause__, pickle.UnpicklingError)  # torch's weights-only unpickler refused it


def test_a_truncated_weights_file_is_refused_naming_the_file(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="cut")
    BACKEND.save_model(model, str(tmp_path), save_optimizer=False)
    path = tmp_path / "cut.pt"
    os.truncate(path, os.path.getsize(path) // 2)
    with pytest.raises(ValueError, match=r"cut\.pt'.*damaged"):
        BACKEND.load_model(model, str(tmp_path), load_optimizer=False)


def test_checkpointed_tensors_name_dtypes_from_a_fixed_table() -> None:
    """A dtype name read from a checkpoint is never looked up on the torch module (`_dynamo` would import code)."""
    reducer = next(r for r in BACKEND.state_reducers() if r.name.startswith("torch"))
    restored = reducer.restore(reducer.reduce(torch.arange(3, dtype=torch.int16)))
    assert restored.dtype == torch.int16 and restored.tolist() == [0, 1, 2]
    for name in ("_dynamo", "compile", "nn", "float32.__class__"):
        with pytest.raises(ValueError, match="not one of"):
            reducer.restore({"dtype": name, "value": np.zeros(2)})


def test_weights_that_do_not_fit_are_reported_with_the_model_name(tmp_path: Any) -> None:
    small = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=None, model_name="shape")
    BACKEND.save_model(small, str(tmp_path), save_optimizer=False)
    big = build(model_fn=lambda: torch.nn.Linear(3, 2), optimizer_fn=None, model_name="shape")
    with pytest.raises(ValueError, match="do not fit torch model 'shape'"):
        BACKEND.load_model(big, str(tmp_path), load_optimizer=False)
    with pytest.raises(FileNotFoundError, match="'missing'"):
        build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=None, model_name="missing",
              weights_path=str(tmp_path / "nothing.pt"))


def test_build_weights_path_loads_saved_weights(tmp_path: Any) -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam", model_name="source")
    BACKEND.save_model(model, str(tmp_path), save_optimizer=False)
    loaded = build(model_fn=LeNet, optimizer_fn="adam", weights_path=str(tmp_path / "source.pt"))
    assert_same_tensors(parameters_of(loaded), parameters_of(model))


def test_scheduled_optimizers_and_pending_gradient_accumulation_are_saved(tmp_path: Any) -> None:
    def make() -> Any:
        torch.manual_seed(1)
        model = build(model_fn=lambda: torch.nn.Linear(3, 2), model_name="sched",
                      optimizer_fn=EpochScheduler({1: lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), 2: "adam"}))
        return model, make_network(ops=[ModelOp(model=model, inputs="x", outputs="p"),
                                        MeanSquaredError(inputs=("p", "y"), outputs="mse"),
                                        UpdateOp(model=model, loss_name="mse", merge_grad=2)])

    rng = np.random.default_rng(0)
    batches = [{"x": rng.normal(size=(4, 3)).astype(np.float32), "y": rng.normal(size=(4, 2)).astype(np.float32)}
               for _ in range(6)]
    model, network = make()
    train_steps(network, batches[:2], epoch=1)  # one SGD step
    train_steps(network, batches[2:5], epoch=2)  # one Adam step, then one gradient waiting in the accumulator
    assert network.ops[-1].fe_backend_state["count"] == 1
    BACKEND.save_model(model, str(tmp_path), save_optimizer=True)

    clone, clone_network = make()
    BACKEND.load_model(clone, str(tmp_path), load_optimizer=True)
    for mine, theirs in zip(model.optimizer.get_all_values(), clone.optimizer.get_all_values()):
        assert_same_tensors(optimizer_state_tensors(theirs), optimizer_state_tensors(mine))
    assert clone.current_optimizer is clone.optimizer.get_current_value(2)
    train_steps(network, batches[5:], epoch=2)
    train_steps(clone_network, batches[5:], epoch=2)  # completes the restored accumulation window
    assert_same_tensors(parameters_of(clone), parameters_of(model))


def test_get_lr_and_set_lr_use_the_current_optimizer() -> None:
    model = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn="rmsprop")
    assert BACKEND.get_lr(model) == pytest.approx(0.01)
    BACKEND.set_lr(model, 0.5)
    assert BACKEND.get_lr(model) == 0.5
    assert all(group["lr"] == 0.5 for group in model.current_optimizer.param_groups)
    untrained = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=None, model_name="frozen")
    with pytest.raises(ValueError, match="'frozen' has no optimizer"):
        BACKEND.get_lr(untrained)


def test_rng_state_is_plain_numpy_data_and_restores_the_stream() -> None:
    state = BACKEND.get_rng_state()
    assert isinstance(state["cpu"], np.ndarray) and state["cpu"].dtype == np.uint8
    assert StateCodec().can_encode(state)
    first = torch.rand(5)
    BACKEND.set_rng_state(state)
    assert torch.equal(torch.rand(5), first)


def test_seed_makes_initialisation_repeatable_and_turns_on_deterministic_algorithms() -> None:
    BACKEND.seed(3)
    first = LeNet().conv1.weight.detach().clone()
    BACKEND.seed(3)
    assert torch.equal(LeNet().conv1.weight, first)
    assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.backends.cudnn.deterministic
    # the deterministic algorithms without the fill of every new tensor (a full extra write of each activation)
    assert torch.utils.deterministic.fill_uninitialized_memory is False
    torch.use_deterministic_algorithms(False)
    torch.utils.deterministic.fill_uninitialized_memory = True


def test_torch_tensors_in_trace_state_survive_the_checkpoint_codec() -> None:
    codec = StateCodec()
    value = {"t": torch.tensor([1.5, 2.5], dtype=torch.bfloat16), "i": torch.arange(3)}
    data, arrays = codec.encode(value)
    restored = codec.decode(data, arrays)
    assert restored["t"].dtype == torch.bfloat16 and torch.equal(restored["t"], value["t"])
    assert torch.equal(restored["i"], value["i"])


def test_system_checkpoint_resumes_training_exactly(tmp_path: Any) -> None:
    x, y = image_task(64, seed=0)

    def estimator() -> Any:
        torch.manual_seed(0)
        model = build(model_fn=LeNet, optimizer_fn="adam", model_name="lenet")
        return Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16),
                         network=lenet_network(model), epochs=2, log_steps=None), model

    original, model = estimator()
    original.fit()
    original.system.save_state(str(tmp_path / "ckpt"))
    expected_draw = torch.rand(3)  # the random stream right after the save
    saved_files = sorted(os.listdir(tmp_path / "ckpt"))
    assert "lenet.pt" in saved_files and "lenet_opt.pt" in saved_files

    restored, clone = estimator()
    assert not all(torch.equal(a, b) for a, b in zip(parameters_of(clone), parameters_of(model)))
    restored.system.load_state(str(tmp_path / "ckpt"))
    assert_same_tensors(parameters_of(clone), parameters_of(model))
    assert_same_tensors(optimizer_state_tensors(clone.current_optimizer),
                        optimizer_state_tensors(model.current_optimizer))
    assert torch.equal(torch.rand(3), expected_draw)


def test_save_weights_writes_a_state_dict_that_load_weights_reads_back(tmp_path) -> None:
    from fe_core.framework import get_backend
    backend = get_backend("torch")
    source = build(model_fn=LeNet, optimizer_fn="adam", model_name="src")
    target = build(model_fn=LeNet, optimizer_fn="adam", model_name="dst")
    path = backend.save_weights(source, str(tmp_path / f"src_best_ce.{backend.model_extension}"))
    assert path.endswith("src_best_ce.pt") and not any(n.endswith(".tmp") for n in os.listdir(tmp_path))
    backend.load_weights(target, path)
    for got, want in zip(target.state_dict().values(), source.state_dict().values()):
        assert torch.equal(got, want)
