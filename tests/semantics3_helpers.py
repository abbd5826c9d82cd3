"""Pieces shared by the torch and tf tests of FastEstimator semantics part 3 (test_fe_semantics3*_{torch,tf}.py):
entries holding a `var` the resume tests change before saving, a save-then-load round trip, a per-dataset eval
trace, CalibrationError fed in two batches, RestoreWizard's keyed-directory round trip, and the trace and data of the
kill-and-resume runs. Framework-free (fe_core
only): the tensors' own `.numpy()` is all it calls."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Tuple

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
from fe_core.trace.io import RestoreWizard
from fe_core.trace.metric import CalibrationError
from fe_core.trace.meta import per_ds


class PlainDataset:
    """A map-style dataset of the user's own that derives from none of fe's classes: not restored."""

    def __init__(self, data: Dict[int, Dict[str, Any]], var: int) -> None:
        self.data, self.var = data, var

    def __getitem__(self, index: int) -> Dict[str, Any]:
        return self.data[index]

    def __len__(self) -> int:
        return len(self.data)


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


def check_restore_wizard_round_trip(directory: Any, make_system: Callable[[], System], epoch: int, step: int) -> None:
    """RestoreWizard called directly: at the end of `epoch` (global step `step`) it writes `key.txt` naming
    `step-<step>` and that directory; a new wizard over the same directory then restores and reports the epoch."""
    def wizard() -> RestoreWizard:
        restore = RestoreWizard(directory=str(directory))
        restore.system = make_system()
        restore.system.total_epochs = 4  # what fit() sets: a checkpoint of a later epoch is refused
        return restore

    first = wizard()
    assert not first.should_restore()
    first.system.epoch_idx, first.system.global_step = epoch, step
    first.on_epoch_end(Data({}))
    assert sorted(os.listdir(directory)) == ["key.txt", f"step-{step}"]
    assert (directory / "key.txt").read_text() == f"step-{step}"
    second, data = wizard(), Data({})
    assert second.should_restore()
    second.on_begin(data)
    assert data["epoch"] == epoch and second.system.epoch_idx == epoch and second.system.global_step == step


def calibration_error_in_two_batches(labels: Any, preds: Any) -> Tuple[CalibrationError, Data]:
    """A CalibrationError over one epoch whose 100 samples come in two batches (60, then 40). Returns the trace and
    the epoch-end data it wrote."""
    error = CalibrationError(true_key="y", pred_key="y_pred")
    error.on_epoch_begin(Data())
    error.on_batch_end(Data({"y": labels[:60], "y_pred": preds[:60]}))
    error.on_batch_end(Data({"y": labels[60:], "y_pred": preds[60:]}))
    end = Data()
    error.on_epoch_end(end)
    return error, end


class Crash(RuntimeError):
    """What the resume tests raise to kill a run mid-epoch."""


class SeeBegin(Trace):
    """Records what `on_begin` sees (after RestoreWizard's, which runs first) and every batch's x."""

    def __init__(self) -> None:
        super().__init__(inputs="x", mode="train")
        self.begin: Dict[str, Any] = {}
        self.batches: List[List[float]] = []

    def get_state(self) -> Dict[str, Any]:
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        pass

    def on_begin(self, data: Any) -> None:
        self.begin = dict(data)

    def on_batch_end(self, data: Any) -> None:
        self.batches.append(np.asarray(data["x"]).reshape(-1).round(4).tolist())


def numbered(size: int, offset: int = 0) -> NumpyDataset:
    x = (np.arange(size, dtype=np.float32) + offset).reshape(-1, 1)
    return NumpyDataset({"x": x, "y": x * 2})
