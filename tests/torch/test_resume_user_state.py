"""Torch: a resumed run gets back what the user's code changed during training (a torch tensor shared by an op and a
trace and updated in place, a constructor-named number, a Sometimes' `prob`), and ends bitwise like an uninterrupted
run."""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
import pytest
import torch

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.op.tensorop.meta import Sometimes
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:  # the harness's setting, not the run's
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        pass

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


class Scale(TensorOp):
    """x * var / temperature: `var` is a torch tensor a trace anneals in place, `temperature` a number it raises."""

    def __init__(self, inputs: str, outputs: str, var: torch.Tensor, temperature: float = 1.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")
        self.var = var
        self.temperature = temperature

    def forward(self, data: torch.Tensor, state: Dict[str, Any]) -> torch.Tensor:
        return data * self.var / self.temperature


class Noise(TensorOp):

    def __init__(self, inputs: str, outputs: str) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")

    def forward(self, data: torch.Tensor, state: Dict[str, Any]) -> torch.Tensor:
        return data + 0.1 * torch.randn_like(data)


class Anneal(Trace):

    def __init__(self, var: torch.Tensor, scale: Scale, sometimes: Sometimes) -> None:
        super().__init__(mode="train")
        self.var, self.scale, self.sometimes = var, scale, sometimes

    def on_epoch_end(self, data) -> None:
        self.var.mul_(0.75)  # in place: the op holds the same tensor
        self.scale.temperature += 0.5
        self.sometimes.prob = min(1.0, self.sometimes.prob + 0.4)


def script(directory: str, kill_at: Optional[int] = None) -> Dict[str, Any]:
    reset_build_count()
    torch.manual_seed(3)
    np.random.seed(3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype(np.float32)
    y = x[:, :1] * 2 - x[:, 1:2]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8)
    model = build(model_fn=lambda: torch.nn.Linear(4, 1), optimizer_fn="adam", model_name="lin")
    var = torch.ones(4)
    scale = Scale("x", "x", var=var)
    sometimes = Sometimes(Noise("x", "x"), prob=0.0)
    network = make_network([scale, sometimes, ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    anneal = Anneal(var, scale, sometimes)
    traces = [KillAt(kill_at), anneal, RestoreWizard(directory, frequency="4s")]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=None)
    return {"estimator": estimator, "model": model, "anneal": anneal, "var": var}


def run(directory: str, kill_at: Optional[int] = None) -> Dict[str, Any]:
    result = script(directory, kill_at)
    result["estimator"].fit()
    return result


def observed(result: Dict[str, Any]) -> Dict[str, Any]:
    anneal = result["anneal"]
    return {"var": anneal.var.tolist(), "temperature": anneal.scale.temperature, "prob": anneal.sometimes.prob}


def test_torch_run_with_a_shared_tensor_and_a_curriculum_resumes_exactly(tmp_path):
    reference = run(str(tmp_path / "reference"))
    with pytest.raises(Crash):
        run(str(tmp_path / "ckpt"), kill_at=15)  # epoch 3 (6 steps an epoch), newest checkpoint at step 12
    resumed = run(str(tmp_path / "ckpt"))
    assert observed(resumed) == observed(reference) == {"var": [0.421875] * 4, "temperature": 2.5, "prob": 1.0}
    assert resumed["anneal"].var is resumed["var"] and resumed["anneal"].scale.var is resumed["var"]  # still shared
    for got, want in zip(resumed["model"].parameters(), reference["model"].parameters()):
        assert torch.equal(got, want)


def test_load_state_assigns_the_shared_tensor_in_place(tmp_path):
    trained = run(str(tmp_path / "a"))
    trained["estimator"].system.save_state(str(tmp_path / "state"))
    fresh = script(str(tmp_path / "b"))
    fresh["estimator"].system.load_state(str(tmp_path / "state"))
    assert observed(fresh) == observed(trained)
    assert fresh["anneal"].var is fresh["var"] and fresh["anneal"].scale.var is fresh["var"]
