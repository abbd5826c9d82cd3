"""ModelSaver and BestModelSaver on TensorFlow write FastEstimator's file names (`<name>_epoch_<n>.h5`,
`<name>_best_<metric>.h5`; Keras 3's weights format inside), which `fe.backend.load_model`, `build(weights_path=...)`
and `load_best_final` read back; `load_model` still reads `.weights.h5`; `save_architecture=True` also saves the whole
model, which Keras loads without the model's code."""
from __future__ import annotations

import os
from typing import Any, Dict, List

import keras
import numpy as np
import pytest

from fe_core.backend.models import load_model, save_model
from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import BestModelSaver, ModelSaver


class Snapshot(Trace):
    """Copies the weights at the end of every training epoch."""

    def __init__(self, model: Any) -> None:
        super().__init__(mode="train")
        self.model = model
        self.weights: Dict[int, List[np.ndarray]] = {}

    def on_epoch_end(self, data) -> None:
        self.weights[self.system.epoch_idx] = [w.numpy().copy() for w in self.model.weights]


def dense() -> keras.Model:
    return keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2, activation="relu"),
                             keras.layers.Dense(1)])


def fit(model: Any, traces: list, epochs: int = 2) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(24, 3)).astype(np.float32)
    y = x[:, :1] - x[:, 1:2]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:8], "y": y[:8]}),
                        batch_size=8)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=None).fit()


def assert_weights(model: Any, expected: List[np.ndarray]) -> None:
    for got, want in zip(model.weights, expected):
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


def test_model_saver_writes_name_epoch_n_h5_that_load_model_and_build_read(tmp_path, capsys):
    model = build(model_fn=dense, optimizer_fn="adam", model_name="reg")
    snapshot = Snapshot(model)
    fit(model, [ModelSaver(model, save_dir=str(tmp_path), max_to_keep=2), snapshot], epochs=3)
    assert sorted(os.listdir(tmp_path)) == ["reg_epoch_2.h5", "reg_epoch_3.h5"]
    out = capsys.readouterr().out
    assert f"FastEstimator-ModelSaver: Saved model to {tmp_path / 'reg_epoch_3.h5'}" in out
    assert f"FastEstimator-ModelSaver: Removed model {tmp_path / 'reg_epoch_1.h5'}" in out
    fresh = build(model_fn=dense, optimizer_fn="adam", model_name="fresh")
    load_model(fresh, str(tmp_path / "reg_epoch_2.h5"))
    assert_weights(fresh, snapshot.weights[2])
    rebuilt = build(model_fn=dense, optimizer_fn="adam", weights_path=str(tmp_path / "reg_epoch_3.h5"))
    assert_weights(rebuilt, snapshot.weights[3])


def test_best_model_saver_writes_name_best_metric_h5_and_loads_it_back(tmp_path, capsys):
    model = build(model_fn=dense, optimizer_fn="adam", model_name="reg")
    snapshot = Snapshot(model)
    saver = BestModelSaver(model, save_dir=str(tmp_path), metric="mse", load_best_final=True)
    fit(model, [saver, snapshot])
    assert os.listdir(tmp_path) == ["reg_best_mse.h5"]
    assert f"Restoring model from {tmp_path / 'reg_best_mse.h5'}" in capsys.readouterr().out
    fresh = build(model_fn=dense, optimizer_fn="adam", model_name="fresh")
    load_model(fresh, str(tmp_path / "reg_best_mse.h5"))
    assert_weights(fresh, [w.numpy() for w in model.weights])


def test_load_model_reads_both_names(tmp_path):
    model = build(model_fn=dense, optimizer_fn="adam", model_name="reg")
    path = save_model(model, str(tmp_path / "saved"), model_name="test")
    expected = [w.numpy() for w in model.weights]
    for name in (path, str(tmp_path / "saved" / "test.h5")):  # the file written, and FastEstimator's name for it
        fresh = build(model_fn=dense, optimizer_fn="adam", model_name="fresh")
        load_model(fresh, name)
        assert_weights(fresh, expected)


@pytest.mark.parametrize("saver_type", ["ModelSaver", "BestModelSaver"])
def test_save_architecture_saves_the_whole_tf_model(tmp_path, saver_type):
    model = build(model_fn=dense, optimizer_fn="adam", model_name="reg")
    saver = ModelSaver(model, save_dir=str(tmp_path), save_architecture=True) if saver_type == "ModelSaver" else \
        BestModelSaver(model, save_dir=str(tmp_path), metric="mse", save_architecture=True)
    fit(model, [saver], epochs=1)
    stem = "reg_epoch_1" if saver_type == "ModelSaver" else "reg_best_mse"
    assert sorted(os.listdir(tmp_path)) == [f"{stem}.h5", f"{stem}.keras"]
    whole = keras.models.load_model(str(tmp_path / f"{stem}.keras"), compile=False)  # no model code needed
    x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(whole(x).numpy(), model(x).numpy(), rtol=1e-6)
