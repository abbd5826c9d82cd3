"""Patterns of FastEstimator's application scripts that fe must run (small equivalents written for fe, numpy only)."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import Delete, LambdaOp
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def _data(n: int = 16) -> NumpyDataset:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return NumpyDataset({"x": x, "y": x.sum(axis=1, keepdims=True), "keypoint": rng.random((n, 2)),
                         "mask_left": rng.random((n, 3))})


def _fit(pipeline: Pipeline) -> Estimator:
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    estimator = Estimator(pipeline, network, epochs=1, log_steps=None, train_steps_per_epoch=2,
                          eval_steps_per_epoch=1)
    estimator.fit()
    return estimator


def test_a_pipeline_deleting_a_key_nobody_reads_runs_in_warmup_and_training() -> None:
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="x"), Delete("keypoint")])
    assert sorted(pipeline.get_results()) == ["mask_left", "x", "y"]
    _fit(pipeline)


def test_a_deleted_key_read_by_an_op_nobody_needs_is_not_demanded() -> None:
    """An op whose outputs nobody reads is skipped; the key it read, deleted afterwards, is never fetched."""
    reads: List[int] = []
    unused = LambdaOp(fn=lambda mask: reads.append(1) or mask.sum(axis=-1), inputs="mask_left", outputs="area")
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[unused, Delete(["mask_left", "area"]), Delete("keypoint", mode="train")])
    _fit(pipeline)
    with pipeline(mode="train", epoch=1, ds_id="", shuffle=False, steps_per_epoch=1,
                  output_keys={"x", "y"}, warmup=True) as loader:
        batch: Dict[str, Any] = next(iter(loader))
    assert sorted(batch) == ["x", "y"] and not reads


def test_a_key_read_before_its_delete_is_still_fetched() -> None:
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4,
                        ops=[LambdaOp(fn=lambda x, k: x + k, inputs=("x", "keypoint"), outputs="x"),
                             Delete(["keypoint", "mask_left"])])
    with pipeline(mode="train", epoch=1, ds_id="", shuffle=False, steps_per_epoch=1,
                  output_keys={"x", "y"}, warmup=True) as loader:
        batch = next(iter(loader))
    data = _data()
    np.testing.assert_allclose(batch["x"], data["x"][:4] + data["keypoint"][:4])
    _fit(pipeline)


def test_a_network_delete_of_a_pipeline_key_runs_in_warmup_and_training() -> None:
    from fe_core.op.tensorop import Delete as TensorDelete
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"), TensorDelete("keypoint"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    pipeline = Pipeline(train_data=_data(), eval_data=_data(), batch_size=4, ops=[Delete("mask_left")])
    Estimator(pipeline, network, epochs=1, log_steps=None, train_steps_per_epoch=2, eval_steps_per_epoch=1).fit()
