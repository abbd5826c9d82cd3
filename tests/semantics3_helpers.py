"""Pieces shared by the torch and tf tests of FastEstimator semantics part 3 (test_fe_semantics3*_{torch,tf}.py):
entries holding a `var` the resume tests change before saving, a save-then-load round trip, and a per-dataset eval
trace. Framework-free (fe_core only): the tensors' own `.numpy()` is all it calls."""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from fe_core.build import build, reset_build_count
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.network import make_network
from fe_core.op.numpyop import NumpyOp
from fe_core.op.tensorop import ModelOp
from fe_core.pipeline import Pipeline
from fe_core.summary import System
from fe_core.trace import Trace
from fe_core.trace.meta import per_ds


class VarDataset(NumpyDataset):
    def __init__(self, data: Dict[str, np.ndarray], var: int) -> None:
        super().__init__(data)
        self.var = var


class VarNumpyOp(NumpyOp):
    def __init__(self, var: int) -> None:
        super().__init__(inputs="x", outputs="x", mode="train")
        self.var = var

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return data


class VarTrace(Trace):
    def __init__(self, var1: int) -> None:
        super().__init__(mode="train")
        self.var1 = var1


def xy(size: int = 4) -> Dict[str, np.ndarray]:
    return {"x": np.ones((size, 2), np.float32), "y": np.ones((size, 1), np.float32)}


def linear_system(model_fn: Callable[[], Any], train_data: Any, ops: List[Any] = (), tensor_ops: List[Any] = (),
                  traces: List[Any] = ()) -> System:
    """A System training `model_fn`'s 2-in 1-out model (named 'lin') on `train_data`, batch size 1."""
    reset_build_count()
    model = build(model_fn=model_fn, optimizer_fn="adam", model_name="lin")
    network = make_network(list(tensor_ops) + [ModelOp(model=model, inputs="x", outputs="y_pred")])
    pipeline = Pipeline(train_data=train_data, ops=list(ops), batch_size=1)
    return System(network=network, pipeline=pipeline, traces=list(traces))


def saved_and_loaded(make: Any, change: Any, tmp_path: Any) -> System:
    """make() a system, change() it, save its state; make() a fresh one and load that state into it."""
    system = make()
    change(system)
    system.save_state(str(tmp_path / "state"))
    fresh = make()
    fresh.load_state(str(tmp_path / "state"))
    return fresh


@per_ds
class PerDSReader(Trace):
    """Counts the eval rows of an epoch and logs them as `rows` (for every eval dataset apart: per_ds)."""

    def __init__(self) -> None:
        super().__init__(inputs="y_pred", outputs="rows", mode="eval")
        self.rows = 0

    def on_epoch_begin(self, data: Data) -> None:
        self.rows = 0

    def on_batch_end(self, data: Data) -> None:
        self.rows += data["y_pred"].numpy().shape[0]

    def on_epoch_end(self, data: Data) -> None:
        data.write_with_log("rows", self.rows)
