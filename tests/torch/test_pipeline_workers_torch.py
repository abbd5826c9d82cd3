"""Pipeline worker processes under torch: fit trains bitwise as in-process, also resumed mid-epoch (RestoreWizard)."""
from __future__ import annotations

import multiprocessing
from typing import Any, Dict, Optional

import numpy as np
import pytest
import torch

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp
from fe_core.op.numpyop.univariate import Onehot
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step
        self.workers = 0

    def on_epoch_end(self, data) -> None:
        pool = getattr(self.system.pipeline, "_worker_pool", None)
        self.workers = len(pool.pids()) if pool is not None else 0

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def run(num_process: int, directory: Optional[str] = None, kill_at: Optional[int] = None) -> Dict[str, Any]:
    reset_build_count()
    enable_deterministic(5)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 16)).astype(np.float32)
    y = (x[:, :4].argmax(axis=1)).astype(np.int64)
    noise = LambdaOp(fn=lambda v: v + np.random.normal(size=v.shape).astype(np.float32) * 0.2, inputs="x",
                     outputs="x")
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16, num_process=num_process,
                        ops=[noise, Onehot(inputs="y", outputs="y", num_classes=4, label_smoothing=0.1)])
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(16, 4), torch.nn.Softmax(dim=-1)),
                  optimizer_fn="adam", model_name="lin")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce")])
    kill = KillAt(kill_at)
    traces = [kill] + ([RestoreWizard(directory, frequency=1)] if directory else [])
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=None)
    estimator.fit()
    return {"params": [p.detach().clone() for p in model.parameters()], "step": estimator.system.global_step,
            "workers": kill.workers}


def test_torch_fit_with_workers_gives_the_in_process_weights_and_resumes_bitwise(tmp_path):
    reference = run(0)
    with_workers = run(2)
    assert with_workers["step"] == reference["step"] == 12
    assert (reference["workers"], with_workers["workers"]) == (0, 2)
    for a, b in zip(reference["params"], with_workers["params"]):
        assert torch.equal(a, b)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(2, directory, kill_at=9)
    assert not multiprocessing.active_children()
    resumed = run(2, directory)
    for a, b in zip(reference["params"], resumed["params"]):
        assert torch.equal(a, b)
