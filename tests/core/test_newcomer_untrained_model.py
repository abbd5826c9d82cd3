"""Issue 30 item 3: a model built with an optimizer that no UpdateOp updates gets one warning in warmup."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def _data() -> NumpyDataset:
    x = np.random.default_rng(0).normal(size=(16, 2)).astype(np.float32)
    return NumpyDataset({"x": x, "y": x[:, :1] * 2})


def _fit(ops, epochs: int = 2):
    estimator = Estimator(pipeline=Pipeline(train_data=_data(), batch_size=4), network=make_network(ops),
                          epochs=epochs, log_steps=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit()
    return [str(w.message) for w in caught if "no UpdateOp updates it" in str(w.message)]


def test_a_model_with_an_optimizer_but_no_update_op_warns_once_naming_it():
    model = nb.build(2, 1, name="forgotten")
    messages = _fit([ModelOp(model=model, inputs="x", outputs="y_pred"),
                     MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")])
    assert len(messages) == 1
    assert "'forgotten'" in messages[0] and "UpdateOp(model=" in messages[0]


def test_an_updated_model_does_not_warn():
    model = nb.build(2, 1, name="trained")
    assert _fit([ModelOp(model=model, inputs="x", outputs="y_pred"),
                 MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                 UpdateOp(model=model, loss_name="mse")]) == []


def test_a_model_without_optimizer_does_not_warn():
    model = nb.build(2, 1, lr=None, name="frozen")
    assert _fit([ModelOp(model=model, inputs="x", outputs="y_pred")]) == []


def test_an_update_op_scheduled_for_later_epochs_counts():
    model = nb.build(2, 1, name="late")
    assert _fit([ModelOp(model=model, inputs="x", outputs="y_pred"),
                 MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                 EpochScheduler({1: None, 2: UpdateOp(model=model, loss_name="mse")})]) == []


def test_an_update_op_that_only_runs_in_eval_does_not_count():
    model = nb.build(2, 1, name="evalonly")
    messages = _fit([ModelOp(model=model, inputs="x", outputs="y_pred"),
                     MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                     UpdateOp(model=model, loss_name="mse", mode="eval")])
    assert len(messages) == 1 and "'evalonly'" in messages[0]


class UpdatesItself(TensorOp):
    """A user's op that holds the model (and could update it with fe.backend.update_model)."""

    def __init__(self, model, inputs, outputs):
        super().__init__(inputs=inputs, outputs=outputs)
        self.model = model

    def forward(self, data, state):
        return data


def test_a_users_own_op_holding_the_model_is_trusted_to_update_it():
    model = nb.build(2, 1, name="custom")
    assert _fit([ModelOp(model=model, inputs="x", outputs="y_pred"),
                 UpdatesItself(model, inputs="y_pred", outputs="y_out")]) == []
