"""TensorFlow: a resumed run gets back what the user's code changed during training (a tf.Variable shared by a TensorOp
running inside tf.function and a trace that assigns it, a pipeline op's curriculum `prob` given to its constructor),
and ends bitwise like an uninterrupted run."""
from __future__ import annotations

from typing import Any, Dict, Optional

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import NumpyOp
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
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
    """x * var, where `var` is a tf.Variable (read inside the compiled step) a trace assigns."""

    def __init__(self, inputs: str, outputs: str, var: tf.Variable) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")
        self.var = var

    def forward(self, data: tf.Tensor, state: Dict[str, Any]) -> tf.Tensor:
        return data * self.var


class Flip(NumpyOp):
    """Negates a sample's x with probability `prob` (a curriculum raises it)."""

    def __init__(self, inputs: str, outputs: str, prob: float = 0.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")
        self.prob = prob

    def forward(self, data: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        return -data if np.random.uniform() < self.prob else data


class Curriculum(Trace):

    def __init__(self, var: tf.Variable, flip: Flip) -> None:
        super().__init__(mode="train")
        self.var, self.flip = var, flip

    def on_epoch_end(self, data) -> None:
        self.var.assign(self.var * 0.5)
        self.flip.prob += 0.25


def script(directory: str, kill_at: Optional[int] = None) -> Dict[str, Any]:
    reset_build_count()
    keras.utils.set_random_seed(3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype(np.float32)
    y = x[:, :1] * 2 - x[:, 1:2]
    flip = Flip("x", "x")
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8, ops=[flip])
    model = build(model_fn=lambda: keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)]),
                  optimizer_fn="adam", model_name="lin")
    var = tf.Variable(tf.ones(4))
    network = make_network([Scale("x", "x", var=var), ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    curriculum = Curriculum(var, flip)
    traces = [KillAt(kill_at), curriculum, RestoreWizard(directory, frequency="4s")]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=None)
    return {"estimator": estimator, "model": model, "curriculum": curriculum, "var": var, "network": network}


def run(directory: str, kill_at: Optional[int] = None) -> Dict[str, Any]:
    result = script(directory, kill_at)
    result["estimator"].fit()
    return result


def observed(result: Dict[str, Any]) -> Dict[str, Any]:
    return {"var": result["curriculum"].var.numpy().tolist(), "prob": result["curriculum"].flip.prob}


def test_tf_run_with_a_shared_variable_and_a_curriculum_resumes_exactly(tmp_path):
    reference = run(str(tmp_path / "reference"))
    with pytest.raises(Crash):
        run(str(tmp_path / "ckpt"), kill_at=15)  # epoch 3 (6 steps an epoch), newest checkpoint at step 12
    resumed = run(str(tmp_path / "ckpt"))
    assert observed(resumed) == observed(reference) == {"var": [0.125] * 4, "prob": 0.75}
    assert resumed["curriculum"].var is resumed["var"] and resumed["network"].ops[0].var is resumed["var"]
    for got, want in zip(resumed["model"].weights, reference["model"].weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_load_state_assigns_the_shared_variable_in_place(tmp_path):
    trained = run(str(tmp_path / "a"))
    trained["estimator"].system.save_state(str(tmp_path / "state"))
    fresh = script(str(tmp_path / "b"))
    fresh["estimator"].system.load_state(str(tmp_path / "state"))
    assert observed(fresh) == observed(trained)
    assert fresh["curriculum"].var is fresh["var"]
