"""The torch backend as fe-core sees it: registry, build/compile_model, optimizers, tensors, native DataLoaders,
and import isolation from TensorFlow."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from fe_core.framework import backend_for_model, get_backend
from fe_core.build import build
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.schedule import EpochScheduler, RepeatScheduler
from fe_torch import LeNet, TorchBackend, TorchNetwork
from torch_helpers import image_task

BACKEND = get_backend("torch")


def test_the_registry_entry_torch_is_the_torch_backend_and_claims_torch_modules() -> None:
    assert isinstance(BACKEND, TorchBackend) and BACKEND.name == "torch" and BACKEND.model_extension == "pt"
    assert backend_for_model(torch.nn.Linear(1, 1)) is BACKEND
    assert not BACKEND.owns_model(object())
    cuda = torch.cuda.is_available()  # False outside `gpu`-marked tests (conftest), on any machine
    assert BACKEND.default_device() == torch.device("cuda:0" if cuda else "cpu")
    assert BACKEND.num_devices() == (1 if cuda else 0)


@pytest.mark.parametrize("name, cls, lr", [("adadelta", torch.optim.Adadelta, 1.0),
                                           ("adagrad", torch.optim.Adagrad, 0.01),
                                           ("adam", torch.optim.Adam, 0.001),
                                           ("adamax", torch.optim.Adamax, 0.002),
                                           ("rmsprop", torch.optim.RMSprop, 0.01),
                                           ("sgd", torch.optim.SGD, 0.01)])
def test_optimizer_names_build_fastestimators_defaults(name: str, cls: type, lr: float) -> None:
    model = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=name)
    assert type(model.current_optimizer) is cls and model.optimizer is model.current_optimizer
    assert model.current_optimizer.param_groups[0]["lr"] == lr
    assert model.current_optimizer.scaler is None  # full precision: no GradScaler
    assert model.model_name == "model" and model.fe_compiled and model.mixed_precision is False


def test_build_several_models_with_names_callables_and_none() -> None:
    first, second = build(model_fn=lambda: [torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)],
                          optimizer_fn=[lambda p: torch.optim.SGD(p, lr=0.3), None], model_name=["gen", "disc"])
    assert (first.model_name, second.model_name) == ("gen", "disc")
    assert first.current_optimizer.param_groups[0]["lr"] == 0.3
    assert {id(p) for p in first.current_optimizer.param_groups[0]["params"]} == {id(p) for p in first.parameters()}
    assert second.optimizer is None and second.current_optimizer is None


def test_scheduled_optimizers_are_built_once_each_and_leave_the_users_scheduler_alone() -> None:
    schedule = EpochScheduler({1: "sgd", 3: "adam"})
    model = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=schedule)
    assert schedule.epoch_dict == {1: "sgd", 3: "adam"}
    assert isinstance(model.optimizer, EpochScheduler)
    assert model.optimizer.get_current_value(2) is model.optimizer.get_current_value(1) is model.current_optimizer
    assert isinstance(model.optimizer.get_current_value(3), torch.optim.Adam)
    repeated = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=RepeatScheduler(["sgd", "adam"]))
    assert [type(o).__name__ for o in repeated.optimizer.get_all_values()] == ["SGD", "Adam"]


def test_bad_optimizers_are_rejected_with_the_model_name() -> None:
    with pytest.raises(ValueError, match="Unknown optimizer 'adamw'.*'bad'"):
        build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn="adamw", model_name="bad")
    with pytest.raises(TypeError, match="'worse'.*must return a torch.optim.Optimizer"):
        build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=lambda p: "sgd", model_name="worse")
    with pytest.raises(TypeError, match="'worst'"):
        build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn=3, model_name="worst")


def test_mixed_precision_on_cpu_uses_bf16_without_a_grad_scaler() -> None:
    model = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn="adam", mixed_precision=True)
    assert model.mixed_precision is True
    assert model.current_optimizer.scaler is None  # the CPU (this test never sees CUDA: conftest)


def test_make_network_gives_a_torch_network_on_the_models_device() -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred")])
    assert isinstance(network, TorchNetwork) and network.device == BACKEND.default_device()


def test_to_tensor_shares_cpu_memory_and_to_numpy_converts_nested_batches() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = BACKEND.to_tensor({"x": array, "s": np.array(["a"]), "n": np.float32(2.0)}, torch.device("cpu"))
    assert tensor["x"].data_ptr() == array.ctypes.data  # no copy on the CPU
    assert tensor["s"].tolist() == ["a"] and float(tensor["n"]) == 2.0
    readonly = np.ones(3)
    readonly.setflags(write=False)
    assert BACKEND.to_tensor(readonly, torch.device("cpu")).tolist() == [1.0, 1.0, 1.0]
    batch = {"x": torch.ones(2, 2, dtype=torch.bfloat16, requires_grad=True), "y": [torch.tensor([1, 2])], "k": "s"}
    converted = BACKEND.to_numpy(batch)
    assert converted["x"].dtype == np.float32 and isinstance(converted["y"][0], np.ndarray) and converted["k"] == "s"


class DictImages(Dataset):
    def __init__(self, n: int, seed: int) -> None:
        self.x, self.y = image_task(n, seed=seed)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, index: int) -> Any:
        return {"x": torch.from_numpy(self.x[index]), "y": torch.tensor(self.y[index])}


def test_native_dataloader_is_recognised_converted_and_trains() -> None:
    loader = DataLoader(DictImages(256, seed=0), batch_size=32, shuffle=True)
    assert BACKEND.is_native_dataset(loader) and not BACKEND.is_native_dataset(DictImages(2, seed=0))
    batch = next(iter(loader))
    converted = BACKEND.to_numpy(batch)
    assert isinstance(converted["x"], np.ndarray) and converted["x"].shape == (32, 1, 28, 28)
    assert converted["y"].dtype == np.int64
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    before = [p.detach().clone() for p in model.parameters()]
    seen = []

    class Types(Trace):
        def on_batch_end(self, data) -> None:
            seen.append((type(data["y"]), type(data["y_pred"])))

    Estimator(pipeline=Pipeline(train_data=loader), network=network, epochs=1, traces=Types(inputs=("y", "y_pred")),
              log_steps=None).fit()
    assert not torch.equal(before[0], model.conv1.weight.detach())
    assert len(seen) == 8 and set(seen) == {(torch.Tensor, torch.Tensor)}  # a user trace reads tensors, as in FE


def test_is_native_dataset_does_not_import_torch() -> None:
    code = textwrap.dedent("""
        import sys
        from fe_torch.framework import TorchBackend
        backend = TorchBackend()
        for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
            del sys.modules[name]
        assert backend.is_native_dataset([1, 2]) is False
        assert backend.owns_model(object()) is False
        assert "torch" not in sys.modules and "torch.utils.data" not in sys.modules
    """)
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))


def test_classifying_and_training_a_torch_model_never_imports_tensorflow() -> None:
    code = textwrap.dedent("""
        import importlib.abc, sys
        import importlib.machinery
        attempts = []
        class Refuse(importlib.abc.Loader):  # a probe (find_spec) succeeds; an actual import fails and is recorded
            def create_module(self, spec):
                attempts.append(spec.name)
                raise ImportError(f"test forbids importing {spec.name}")
            def exec_module(self, module):
                raise ImportError(module.__name__)
        class Guard(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("tensorflow", "keras", "fe_tf"):
                    return importlib.machinery.ModuleSpec(name, Refuse())
                return None
        sys.meta_path.insert(0, Guard())
        import numpy as np, torch
        from fe_core.framework import backend_for_model
        from fe_core.build import build
        from fe_core.network import make_network
        from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
        from fe_torch import LeNet
        model = build(model_fn=LeNet, optimizer_fn="adam")
        assert backend_for_model(model).name == "torch"
        network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="p"),
                                    CrossEntropy(inputs=("p", "y"), outputs="ce"), UpdateOp(model=model, loss_name="ce")])
        with network(mode="train", epoch=1):
            network.run_step({"x": np.zeros((2, 1, 28, 28), np.float32), "y": np.zeros(2, np.int64)})["ce"]
        assert attempts == [], attempts
        assert not any(m.split(".")[0] in ("tensorflow", "keras") for m in sys.modules)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr
