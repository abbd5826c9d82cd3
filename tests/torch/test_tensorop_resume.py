"""Torch: a run with random TensorOps (MixUpBatch, Sometimes, OneOf) and SuperLoss, killed mid-epoch and resumed by
RestoreWizard, ends bitwise where the uninterrupted run ends (the ops' draws come from the saved torch generator;
SuperLoss's moving average is checkpointed)."""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
import pytest
import torch

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import (CrossEntropy, LambdaOp, MixUpBatch, ModelOp, OneOf, Sometimes, SuperLoss,
                                 UpdateOp)
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data: Any) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def run(directory: Optional[str], kill_at: Optional[int] = None) -> Dict[str, Any]:
    reset_build_count()
    enable_deterministic(3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 16)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[x[:, :4].argmax(axis=1)]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=16)
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(16, 4), torch.nn.Softmax(dim=-1)),
                  optimizer_fn="adam", model_name="mlp")
    super_loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    network = make_network([
        MixUpBatch(inputs=("x", "y"), outputs=("x", "y")),
        Sometimes(LambdaOp(fn=lambda x: x * 0.5, inputs="x", outputs="x")),
        OneOf(LambdaOp(fn=lambda x: x + 0.1, inputs="x", outputs="x"), LambdaOp(fn=lambda x: x - 0.1, inputs="x",
                                                                                  outputs="x")),
        ModelOp(model=model, inputs="x", outputs="y_pred"), super_loss, UpdateOp(model=model, loss_name="ce")])
    traces = [KillAt(kill_at)] + ([RestoreWizard(directory, frequency="3s")] if directory else [])
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=None).fit()
    return {"params": [p.detach().clone() for p in model.parameters()], "tau": super_loss.get_state()}


@pytest.mark.parametrize("kill_at", [5, 7])
def test_a_killed_run_with_random_tensorops_resumes_bitwise(tmp_path: Any, kill_at: int) -> None:
    reference = run(None)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, kill_at=kill_at)
    resumed = run(directory)
    for got, want in zip(resumed["params"], reference["params"]):
        assert torch.equal(got, want)
    assert resumed["tau"] == reference["tau"]


def test_meta_ops_checkpoint_the_state_of_the_ops_they_wrap() -> None:
    from fe_core.op.tensorop import Fuse  # pylint: disable=import-outside-toplevel
    loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    fused = Fuse([LambdaOp(fn=lambda x: x, inputs="x", outputs="y_pred", mode="!infer"), loss])
    fused.build("torch")
    loss.set_state({"tau": {"train": [1.0, 0.75]}})
    state = fused.get_state()
    assert len(state["ops"]) == 2 and state["ops"][1]["tau"]["train"] == [1.0, 0.75]
    copy_loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    copy = Fuse([LambdaOp(fn=lambda x: x, inputs="x", outputs="y_pred", mode="!infer"), copy_loss])
    copy.build("torch")
    copy.set_state(state)
    assert copy_loss.get_state()["tau"]["train"] == [1.0, 0.75]
    with pytest.raises(ValueError, match="wraps 2 op"):
        copy.set_state({"ops": [{}]})
