"""TensorFlow, issue 36 items 4, 10 and 12: what a checkpoint restores of scheduled and nested entries, as
FastEstimator does (ops, traces and fe's datasets inside an EpochScheduler / RepeatScheduler, datasets inside a
BatchDataset; a dataset class that is not fe's is the script's and keeps its value), and RestoreWizard's
FastEstimator-style directory (`key.txt`, `should_restore`, the restored `epoch`) with a BatchDataset resuming at its
position (the tensor ops run inside the compiled step)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build, reset_build_count
from fe_core.dataset import BatchDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler, RepeatScheduler
from fe_core.summary import System
from fe_core.trace.io import RestoreWizard
from semantics3_helpers import (Crash, PlainDataset, SeeBegin, VarDataset, VarNumpyOp, VarTrace,
                                check_restore_wizard_round_trip, linear_system, numbered, saved_and_loaded, xy)


class ScaleBy(TensorOp):
    """x * var inside the compiled step."""

    def __init__(self, var: float) -> None:
        super().__init__(inputs="x", outputs="x", mode="train")
        self.var = var

    def forward(self, data: tf.Tensor, state: Dict[str, Any]) -> tf.Tensor:
        return data * self.var


def dense(inputs: int) -> Any:
    return keras.Sequential([keras.Input(shape=(inputs,)), keras.layers.Dense(1)])


def system_of(train_data: Any, ops: List[Any] = (), tensor_ops: List[Any] = (), traces: List[Any] = ()) -> System:
    return linear_system(lambda: dense(2), train_data, ops, tensor_ops, traces)


def train_data(system: System) -> Any:
    return list(system.pipeline.data["train"].values())[0]


def test_scheduled_hybrid_datasets_restore_fe_datasets_only(tmp_path):
    rows = {index: {"x": np.ones(2, np.float32), "y": np.ones(1, np.float32)} for index in range(2)}

    def make() -> System:
        return system_of(RepeatScheduler([PlainDataset(rows, var=3), VarDataset(xy(2), var=7), None]))

    def change(system: System) -> None:
        train_data(system).get_current_value(1).var, train_data(system).get_current_value(2).var = 4, 99

    scheduler = train_data(saved_and_loaded(make, change, tmp_path))
    assert len(scheduler.repeat_list) == 3 and scheduler.get_current_value(3) is None
    assert isinstance(scheduler.get_current_value(1), PlainDataset) and scheduler.get_current_value(1).var == 3
    assert isinstance(scheduler.get_current_value(2), VarDataset) and scheduler.get_current_value(2).var == 99


def test_scheduled_ops_traces_and_batch_dataset_members_restore_their_values(tmp_path):
    def make() -> System:
        shared = VarDataset(xy(), var=1)
        return system_of(BatchDataset(datasets=[shared, shared], num_samples=[1, 1]),
                         ops=[RepeatScheduler([VarNumpyOp(var=1), VarNumpyOp(var=1)])],
                         tensor_ops=[EpochScheduler({1: ScaleBy(var=1.0), 3: ScaleBy(var=1.0)})],
                         traces=[RepeatScheduler([VarTrace(var1=1), VarTrace(var1=1)])])

    def change(system: System) -> None:
        train_data(system).datasets[0].var = 2
        system.pipeline.ops[0].get_current_value(2).var = 2
        system.network.ops[0].get_current_value(3).var = 0.5
        system.traces[0].get_current_value(1).var1 = 6

    loaded = saved_and_loaded(make, change, tmp_path)
    assert [member.var for member in train_data(loaded).datasets] == [2, 2]
    assert [op.var for op in loaded.pipeline.ops[0].repeat_list] == [1, 2]
    assert [loaded.network.ops[0].get_current_value(e).var for e in (1, 3)] == [1.0, 0.5]
    assert [trace.var1 for trace in loaded.traces[0].repeat_list] == [6, 1]


# ---------------------------------------------------------------------------------------------- RestoreWizard
class Probe(SeeBegin):
    """Kills the run at `step`, records what `on_begin` sees (after RestoreWizard's) and every batch's x."""

    def __init__(self, step: Optional[int]) -> None:
        super().__init__()
        self.step = step

    def on_batch_end(self, data: Any) -> None:
        super().on_batch_end(data)
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def run(directory: str, kill_at: Optional[int] = None) -> Dict[str, Any]:
    reset_build_count()
    keras.utils.set_random_seed(1)  # python, numpy and the frameworks' seeds: the same initial weights
    pipeline = Pipeline(train_data=BatchDataset([numbered(6), numbered(5, 100)], num_samples=[2, 1]))
    model = build(model_fn=lambda: dense(1), optimizer_fn="adam", model_name="lin")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    probe, wizard = Probe(kill_at), RestoreWizard(directory, frequency="2s")
    should = wizard.should_restore()
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None, traces=[probe, wizard])
    try:
        estimator.fit()
    finally:
        result = {"probe": probe, "should_restore": should, "weights": [w.numpy() for w in model.weights]}
    return result


def test_restore_wizard_writes_key_txt_and_resumes_a_batch_dataset_at_its_position(tmp_path):
    reference = run(str(tmp_path / "reference"))
    directory = tmp_path / "ckpt"
    with pytest.raises(Crash):
        run(str(directory), kill_at=7)  # 5 steps an epoch: the newest checkpoint is step 6, in epoch 2
    assert sorted(os.listdir(directory)) == ["key.txt", "step-4", "step-6"]
    assert (directory / "key.txt").read_text() == "step-6"  # FastEstimator's key file names the newest checkpoint
    resumed = run(str(directory))
    assert resumed["should_restore"] and not reference["should_restore"]
    assert resumed["probe"].begin["epoch"] == 2 and "epoch" not in reference["probe"].begin
    assert resumed["probe"].batches == reference["probe"].batches[6:]
    for got, want in zip(resumed["weights"], reference["weights"]):
        np.testing.assert_array_equal(got, want)


def test_restore_wizard_called_directly_saves_a_keyed_directory_and_restores_the_epoch(tmp_path):
    check_restore_wizard_round_trip(tmp_path / "wizard", lambda: system_of(VarDataset(xy(), var=1)), epoch=3, step=12)
