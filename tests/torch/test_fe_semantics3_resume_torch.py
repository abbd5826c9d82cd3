"""Torch, issue 36 items 4, 10 and 12: what a checkpoint restores of scheduled and nested entries, as FastEstimator
does (ops, traces and fe's datasets inside an EpochScheduler / RepeatScheduler, datasets inside a BatchDataset or an
InterleaveDataset; a torch Dataset is the script's and keeps its value), and RestoreWizard's FastEstimator-style
directory (`key.txt`, `should_restore`, the restored `epoch` in `on_begin`'s data) with a BatchDataset and an
InterleaveDataset resuming at their position."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np
import pytest
import torch

from fe_core.build import build, reset_build_count
from fe_core.dataset import BatchDataset, InterleaveDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop.batch import Batch
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler, RepeatScheduler
from fe_core.summary import System
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard
from semantics3_helpers import (Crash, PlainDataset, SeeBegin, VarDataset, VarNumpyOp, VarTrace,
                                check_restore_wizard_round_trip, linear_system, numbered, saved_and_loaded, xy)


class TorchDataset(PlainDataset, torch.utils.data.Dataset):
    """Not an fe dataset (a torch Dataset holding `data` and `var`): FastEstimator does not restore it."""


class VarTensorOp(TensorOp):
    def __init__(self, var: int) -> None:
        super().__init__(inputs="x", outputs="x", mode="train")
        self.var = var

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return data


def system_of(train_data: Any, ops: List[Any] = (), tensor_ops: List[Any] = (), traces: List[Any] = ()) -> System:
    return linear_system(lambda: torch.nn.Linear(2, 1), train_data, ops, tensor_ops, traces)


def scheduled_datasets() -> RepeatScheduler:
    rows = {0: {"x": np.ones(2, np.float32), "y": np.ones(1, np.float32)}, 1: {"x": np.ones(2, np.float32),
                                                                          "y": np.ones(1, np.float32)}}
    return RepeatScheduler([TorchDataset(rows, var=3), VarDataset(xy(2), var=7), None])


def test_scheduled_hybrid_datasets_restore_fe_datasets_only(tmp_path):
    def change(system: System) -> None:
        data = list(system.pipeline.data["train"].values())[0]
        data.get_current_value(1).var, data.get_current_value(2).var = 4, 99

    loaded = saved_and_loaded(lambda: system_of(scheduled_datasets()), change, tmp_path)
    scheduler = list(loaded.pipeline.data["train"].values())[0]
    assert len(scheduler.repeat_list) == 3 and scheduler.get_current_value(3) is None
    assert isinstance(scheduler.get_current_value(1), TorchDataset) and scheduler.get_current_value(1).var == 3
    assert isinstance(scheduler.get_current_value(2), VarDataset) and scheduler.get_current_value(2).var == 99


def test_only_torch_datasets_in_a_scheduler_keep_their_values(tmp_path):
    rows = {0: {"x": np.ones(2, np.float32), "y": np.ones(1, np.float32)}}

    def make() -> System:
        return system_of(RepeatScheduler([TorchDataset(rows, var=3), TorchDataset(rows, var=7)]))

    def change(system: System) -> None:
        scheduler = list(system.pipeline.data["train"].values())[0]
        scheduler.get_current_value(1).var, scheduler.get_current_value(2).var = 4, 99

    scheduler = list(saved_and_loaded(make, change, tmp_path).pipeline.data["train"].values())[0]
    assert [scheduler.get_current_value(1).var, scheduler.get_current_value(2).var] == [3, 7]


def test_scheduled_ops_and_traces_restore_their_values(tmp_path):
    def make() -> System:
        return system_of(VarDataset(xy(), var=1),
                         ops=[RepeatScheduler([VarNumpyOp(var=1), VarNumpyOp(var=1)])],
                         tensor_ops=[EpochScheduler({1: VarTensorOp(var=1), 3: VarTensorOp(var=1)})],
                         traces=[RepeatScheduler([VarTrace(var1=1), VarTrace(var1=1)])])

    def change(system: System) -> None:
        system.pipeline.ops[0].get_current_value(2).var = 2
        system.network.ops[0].get_current_value(3).var = 5
        system.traces[0].get_current_value(1).var1 = 6

    loaded = saved_and_loaded(make, change, tmp_path)
    assert [op.var for op in loaded.pipeline.ops[0].repeat_list] == [1, 2]
    assert [loaded.network.ops[0].get_current_value(e).var for e in (1, 3)] == [1, 5]
    assert [trace.var1 for trace in loaded.traces[0].repeat_list] == [6, 1]


@pytest.mark.parametrize("kind", ["batch", "interleave"])
def test_datasets_inside_batch_and_interleave_datasets_restore_their_values(tmp_path, kind):
    def make() -> System:
        shared = VarDataset(xy(), var=1)
        if kind == "batch":
            return system_of(BatchDataset(datasets=[shared, shared], num_samples=[1, 1]))
        torch_rows = {index: {"x": np.ones(2, np.float32), "y": np.ones(1, np.float32)} for index in range(4)}
        return system_of(InterleaveDataset([shared, TorchDataset(torch_rows, var=3)]))

    def change(system: System) -> None:
        members = list(system.pipeline.data["train"].values())[0].datasets
        members[0].var = 2
        members[1].var = 4 if kind == "interleave" else 2

    members = list(saved_and_loaded(make, change, tmp_path).pipeline.data["train"].values())[0].datasets
    assert members[0].var == 2
    assert members[1].var == (3 if kind == "interleave" else 2)  # a torch Dataset keeps the script's value


# ---------------------------------------------------------------------------------------------- RestoreWizard
class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        pass

    def on_batch_end(self, data: Any) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def run(directory: str, kind: str, kill_at: Optional[int] = None, frequency: Any = "2s") -> Dict[str, Any]:
    reset_build_count()
    torch.manual_seed(1)
    np.random.seed(1)
    if kind == "batch":
        pipeline = Pipeline(train_data=BatchDataset([numbered(6), numbered(5, 100)], num_samples=[2, 1]))
    else:
        pipeline = Pipeline(train_data=InterleaveDataset({"a": numbered(6), "b": numbered(4, 100)},
                                                         pattern=["a", "b", "b"]),
                            ops=[Batch(batch_size=2, ds_id="a"), Batch(batch_size=1, ds_id="b")])
    model = build(model_fn=lambda: torch.nn.Linear(1, 1), optimizer_fn="adam", model_name="lin")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    seen, wizard = SeeBegin(), RestoreWizard(directory, frequency=frequency)
    should = wizard.should_restore()
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None,
                          traces=[KillAt(kill_at), seen, wizard])
    try:
        estimator.fit()
    finally:
        result = {"seen": seen, "should_restore": should, "weights": [p.detach().clone() for p in model.parameters()]}
    return result


@pytest.mark.parametrize("kind, kill_at, frequency", [("batch", 5, "2s"), ("interleave", 4, "2s"), ("batch", 7, 1)])
def test_restore_wizard_writes_key_txt_and_resumes_batch_and_interleave_datasets_at_their_position(tmp_path, kind,
                                                                                                   kill_at, frequency):
    reference = run(str(tmp_path / "reference"), kind)
    directory = tmp_path / "ckpt"
    with pytest.raises(Crash):
        run(str(directory), kind, kill_at=kill_at, frequency=frequency)  # every 2 steps, or each epoch (FE's default)
    newest = max((name for name in os.listdir(directory) if name.startswith("step-")),
                 key=lambda name: int(name.split("-")[1]))
    assert (directory / "key.txt").read_text() == newest  # FastEstimator's key file names the newest checkpoint
    resumed = run(str(directory), kind, frequency=frequency)
    assert resumed["should_restore"] and not reference["should_restore"]
    restored_step = int(newest.split("-")[1])
    assert resumed["seen"].begin["epoch"] == 1  # the checkpoint (step 4, or 5 at its end) was taken in epoch 1
    assert "epoch" not in reference["seen"].begin
    # the batches after the checkpoint are the very batches of the uninterrupted run
    assert resumed["seen"].batches == reference["seen"].batches[restored_step:]
    for got, want in zip(resumed["weights"], reference["weights"]):
        assert torch.equal(got, want)


def test_restore_wizard_called_directly_saves_a_keyed_directory_and_restores_the_epoch(tmp_path):
    check_restore_wizard_round_trip(tmp_path / "wizard", lambda: system_of(VarDataset(xy(), var=1)), epoch=2, step=8)
