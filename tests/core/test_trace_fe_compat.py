"""Arguments of existing traces that trace.md documents: ModelSaver/BestModelSaver weights_name, LRScheduler ds_id."""
from __future__ import annotations

import os

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import ModelOp, UpdateOp
from fe_core.op.tensorop.loss import MeanSquaredError
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.adapt import LRScheduler
from fe_core.trace.io import BestModelSaver, ModelSaver


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def _run(model, traces, epochs=2):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 2)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": (x @ np.array([[2.0], [-1.0]])).astype(np.float32)})
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline=Pipeline(train_data=data, eval_data=data, batch_size=4), network=network, epochs=epochs,
              traces=traces, log_steps=0).fit()


class Score(Trace):
    def __init__(self):
        super().__init__(outputs="score", mode="eval")

    def on_epoch_end(self, data):
        data.write_with_log("score", 1.0 / self.system.epoch_idx)


def test_model_saver_weights_name_is_the_file_prefix_and_checkpoints_accept_it(tmp_path):
    model = nb.build(2, 1, lr=0.05, name="net")
    saver = ModelSaver(model, save_dir=str(tmp_path), max_to_keep=1, weights_name="mine")
    _run(model, [saver])
    assert os.listdir(tmp_path) == ["mine_epoch_2.npz"]
    fresh = ModelSaver(model, save_dir=str(tmp_path), weights_name="mine")
    set_object_state(fresh, get_object_state(saver))
    assert fresh.saved_files == [[str(tmp_path / "mine_epoch_2.npz")]]
    with pytest.raises(ValueError, match="weights_name"):
        ModelSaver(model, save_dir=str(tmp_path), weights_name="../x")


def test_best_model_saver_weights_name_is_the_exact_file_name(tmp_path):
    model = nb.build(2, 1, lr=0.05, name="net")
    saver = BestModelSaver(model, str(tmp_path), "score", "min", "best_net", True)  # FastEstimator's argument order
    _run(model, [Score(), saver])
    assert os.listdir(tmp_path) == ["best_net.npz"] and saver.load_best_final
    fresh = BestModelSaver(model, str(tmp_path), "score", weights_name="best_net")
    set_object_state(fresh, get_object_state(saver))
    assert fresh.model_path == str(tmp_path / "best_net.npz")


def test_lr_scheduler_takes_a_ds_id():
    model = nb.build(2, 1, lr=0.05, name="net")
    assert LRScheduler(model, lambda epoch: 0.1, ds_id="ds1").ds_id == {"ds1"}
    assert LRScheduler(model, lambda step: 0.1).ds_id == set()


def test_per_ds_decorator_adds_per_dataset_results():
    from trace_helpers import run_epoch
    from fe_core.trace.meta import per_ds

    @per_ds
    class Mean(Trace):
        def __init__(self, key, per_ds=True):
            super().__init__(inputs=key, outputs="mean", mode="eval")
            self.per_ds = per_ds

        def on_epoch_begin(self, data):
            self.values = []

        def on_batch_end(self, data):
            self.values.extend(np.asarray(data[self.inputs[0]]).tolist())

        def on_epoch_end(self, data):
            data.write_with_log("mean", float(np.mean(self.values)))

    batches = {"a": [{"x": [1.0, 3.0]}], "b": [{"x": [5.0]}, {"x": [7.0]}]}
    logs = dict(run_epoch(Mean("x"), per_ds=batches).read_logs())
    assert logs == {"mean": 4.0, "mean|a": 2.0, "mean|b": 6.0}
    assert dict(run_epoch(Mean("x", per_ds=False), per_ds=batches).read_logs()) == {"mean": 4.0}
    assert Mean("x").get_outputs(["a"]) == ["mean", "mean|a"]
    with pytest.raises(TypeError):
        per_ds(int)
