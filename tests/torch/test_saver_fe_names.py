"""ModelSaver and BestModelSaver on torch write FastEstimator's file names (`<name>_epoch_<n>.pt`,
`<name>_best_<metric>.pt`) that `fe.backend.load_model` and `build(weights_path=...)` read back, and refuse
`save_architecture=True` with a ValueError when constructed, as documented."""
from __future__ import annotations

import os
from typing import Any, Dict

import numpy as np
import pytest
import torch

from fe_core.backend.models import load_model
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

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__(mode="train")
        self.model = model
        self.weights: Dict[int, torch.Tensor] = {}

    def on_epoch_end(self, data) -> None:
        self.weights[self.system.epoch_idx] = self.model.weight.detach().clone()


def linear() -> torch.nn.Module:
    return torch.nn.Linear(3, 1)


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


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


def test_model_saver_writes_name_epoch_n_pt_that_load_model_reads(tmp_path, capsys):
    model = build(model_fn=linear, optimizer_fn="sgd", model_name="reg")
    snapshot = Snapshot(model)
    fit(model, [ModelSaver(model, save_dir=str(tmp_path)), snapshot])
    assert sorted(os.listdir(tmp_path)) == ["reg_epoch_1.pt", "reg_epoch_2.pt"]
    assert f"FastEstimator-ModelSaver: Saved model to {tmp_path / 'reg_epoch_2.pt'}" in capsys.readouterr().out
    fresh = build(model_fn=linear, optimizer_fn="sgd", model_name="fresh")
    load_model(fresh, str(tmp_path / "reg_epoch_1.pt"))
    assert torch.equal(fresh.weight, snapshot.weights[1])
    rebuilt = build(model_fn=linear, optimizer_fn="sgd", weights_path=str(tmp_path / "reg_epoch_2.pt"))
    assert torch.equal(rebuilt.weight, snapshot.weights[2])


def test_best_model_saver_writes_name_best_metric_pt(tmp_path):
    model = build(model_fn=linear, optimizer_fn="sgd", model_name="reg")
    fit(model, [BestModelSaver(model, save_dir=str(tmp_path), metric="mse", load_best_final=True)])
    assert os.listdir(tmp_path) == ["reg_best_mse.pt"]
    fresh = build(model_fn=linear, optimizer_fn="sgd", model_name="fresh")
    load_model(fresh, str(tmp_path / "reg_best_mse.pt"))
    assert torch.equal(fresh.weight, model.weight)  # load_best_final put the same weights back into the model


@pytest.mark.parametrize("saver", [ModelSaver, BestModelSaver])
def test_save_architecture_with_a_torch_model_raises_value_error_when_constructed(tmp_path, saver):
    model = build(model_fn=linear, optimizer_fn="sgd", model_name="reg")
    with pytest.raises(ValueError, match="save_architecture.*'torch' backend cannot save model architectures"):
        saver(model, save_dir=str(tmp_path), save_architecture=True)
    assert os.listdir(tmp_path) == []
