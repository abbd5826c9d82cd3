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


class KeepBatches(Trace):
    """Keeps the batch tensors fit hands the traces (zero-copy views of the workers' shared memory), and a clone."""

    def __init__(self) -> None:
        super().__init__(inputs="x", mode="train")
        self.kept = []

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data) -> None:
        if self.system.global_step % 5 == 1:
            tensor = data["x"]
            self.kept += [(tensor, tensor.clone()), (tensor[3:7, ::2], tensor[3:7, ::2].clone())]


def test_torch_tensors_kept_from_worker_batches_never_change_while_segments_are_reused():
    data = np.random.default_rng(1).normal(size=(512, 64, 16)).astype(np.float32)  # 64 KiB per batch of 16
    pipeline = Pipeline(train_data=NumpyDataset({"x": data}), batch_size=16, num_process=2,
                        ops=[LambdaOp(fn=lambda v: v * 2, inputs="x", outputs="x")])
    kept = []
    with pipeline.workers():
        for epoch in (1, 2, 3):
            with pipeline(mode="train", epoch=epoch, shuffle=False) as loader:
                for index, batch in enumerate(loader):
                    # the loader's tensor shares the workers' shared memory; torch.from_numpy of its numpy view too
                    tensor = batch["x"] if index % 2 else torch.from_numpy(batch["x"].numpy())
                    assert torch.equal(tensor, torch.from_numpy(data[16 * index:16 * (index + 1)] * 2))
                    if index % 6 == 0:
                        kept += [(tensor, tensor.clone()), (tensor[2:5].transpose(1, 2), tensor[2:5].transpose(1, 2)
                                                             .clone()), (tensor.view(-1)[50:90], tensor.view(-1)[50:90]
                                                                          .clone())]
                    del batch, tensor
    for tensor, value in kept:
        assert torch.equal(tensor, value)
    # fit: the batch tensors the Estimator hands the traces (zero-copy on the CPU), kept by a trace over later steps
    labels = data[:, 0, :4].argmax(axis=1).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": data, "y": labels}), batch_size=16, num_process=2,
                        ops=[LambdaOp(fn=lambda v: v * 2, inputs="x", outputs="x")])
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64 * 16, 4)),
                  optimizer_fn="sgd", model_name="flat")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                            UpdateOp(model=model, loss_name="ce")])
    keep = KeepBatches()
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=[keep], log_steps=None).fit()
    assert len(keep.kept) == 2 * 13
    for tensor, value in keep.kept:
        assert torch.equal(tensor, value)
