"""Pipeline worker processes under TensorFlow (forked after TF started its threads): fit trains bitwise as in-process."""
from __future__ import annotations

import multiprocessing
from typing import Any, Dict

import keras
import numpy as np
import pytest

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")


class Workers(Trace):
    def __init__(self) -> None:
        super().__init__(mode="train")
        self.count = 0

    def on_epoch_end(self, data) -> None:
        pool = getattr(self.system.pipeline, "_worker_pool", None)
        self.count = len(pool.pids()) if pool is not None else 0


def run(num_process: int) -> Dict[str, Any]:
    reset_build_count()
    enable_deterministic(6)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype(np.float32)
    y = (x[:, :3].argmax(axis=1)).astype(np.int64)
    noise = LambdaOp(fn=lambda v: v + np.random.normal(size=v.shape).astype(np.float32) * 0.2, inputs="x",
                     outputs="x")
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16, num_process=num_process,
                        ops=[noise])
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")]),
                  optimizer_fn="sgd")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce")])
    workers = Workers()
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=[workers], log_steps=None).fit()
    return {"weights": [np.array(w) for w in model.get_weights()], "workers": workers.count}


def test_tf_fit_with_workers_gives_the_in_process_weights():
    reference = run(0)
    with_workers = run(2)
    assert (reference["workers"], with_workers["workers"]) == (0, 2)
    for a, b in zip(reference["weights"], with_workers["weights"]):
        np.testing.assert_array_equal(a, b)
    assert not multiprocessing.active_children()
