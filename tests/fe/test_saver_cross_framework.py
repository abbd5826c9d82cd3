"""ModelSaver and BestModelSaver save each model through its own framework, whatever the Network's framework is: a
torch model under a TensorFlow System is written as `.pt` by torch and never reaches a Keras call, and a Keras model
under a torch System as `.h5` by Keras."""
from __future__ import annotations

import os
from typing import Any, List

import keras
import numpy as np
import pytest
import torch

import fe_tf.h5_weights
import fe_torch.checkpoint
from fe_core.backend.models import load_model
from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.io import BestModelSaver, ModelSaver


def keras_model() -> keras.Model:
    return keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])


def torch_model() -> torch.nn.Module:
    return torch.nn.Linear(3, 1)


def fit(trained: Any, traces: List[Any]) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = x[:, :1] - x[:, 1:2]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:8], "y": y[:8]}),
                        batch_size=8)
    network = make_network([ModelOp(model=trained, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=trained, loss_name="mse")])
    Estimator(pipeline=pipeline, network=network, epochs=1, traces=traces, log_steps=None).fit()


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


def test_a_torch_model_under_a_tensorflow_system_is_saved_by_torch(tmp_path, monkeypatch):
    keras_calls: List[Any] = []
    original = fe_tf.h5_weights.save_h5_weights
    monkeypatch.setattr(fe_tf.h5_weights, "save_h5_weights", lambda model, path: keras_calls.append(model) or
                        original(model, path))
    trained = build(model_fn=keras_model, optimizer_fn="adam", model_name="tf_net")
    side = build(model_fn=torch_model, optimizer_fn="sgd", model_name="torch_net")
    fit(trained, [ModelSaver(side, save_dir=str(tmp_path)),
                  BestModelSaver(side, save_dir=str(tmp_path), metric="mse", load_best_final=True),
                  ModelSaver(trained, save_dir=str(tmp_path))])
    assert sorted(os.listdir(tmp_path)) == ["tf_net_epoch_1.h5", "torch_net_best_mse.pt", "torch_net_epoch_1.pt"]
    assert keras_calls == [trained]  # only the Keras model reached Keras
    fresh = build(model_fn=torch_model, optimizer_fn="sgd", model_name="fresh")
    load_model(fresh, str(tmp_path / "torch_net_epoch_1.pt"))
    assert torch.equal(fresh.weight, side.weight)


def test_a_keras_model_under_a_torch_system_is_saved_by_keras(tmp_path, monkeypatch):
    torch_calls: List[Any] = []
    original = fe_torch.checkpoint.save_weights
    monkeypatch.setattr(fe_torch.checkpoint, "save_weights", lambda model, path: torch_calls.append(model) or
                        original(model, path))
    trained = build(model_fn=torch_model, optimizer_fn="sgd", model_name="torch_net")
    side = build(model_fn=keras_model, optimizer_fn="adam", model_name="tf_net")
    fit(trained, [ModelSaver(side, save_dir=str(tmp_path), save_architecture=True)])
    assert sorted(os.listdir(tmp_path)) == ["tf_net_epoch_1.h5", "tf_net_epoch_1.keras"]
    assert torch_calls == []
    fresh = build(model_fn=keras_model, optimizer_fn="adam", model_name="fresh")
    load_model(fresh, str(tmp_path / "tf_net_epoch_1.h5"))
    for got, want in zip(fresh.weights, side.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
