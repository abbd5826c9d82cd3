"""Exact resume on TensorFlow: a run killed at a random step and started again ends with bitwise identical weights."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import keras
import numpy as np
import pytest

from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
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

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def mlp() -> keras.Model:
    return keras.Sequential([keras.Input(shape=(16,)), keras.layers.Dense(32, activation="relu"),
                             keras.layers.Dropout(0.3), keras.layers.Dense(4, activation="softmax")])


def run(directory: Optional[str], kill_at: Optional[int] = None, merge_grad: int = 1) -> List[np.ndarray]:
    """A user's script from the top: seeds, data, model (with dropout), Adam, fit in a tf.function."""
    reset_build_count()
    keras.utils.set_random_seed(3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 16)).astype(np.float32)
    y = (x[:, :4].argmax(axis=1)).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:32], "y": y[:32]}),
                        batch_size=16)
    model = build(model_fn=mlp, optimizer_fn="adam", model_name="mlp")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce", merge_grad=merge_grad)])
    traces = [KillAt(kill_at)] + ([RestoreWizard(directory, frequency="4s")] if directory else [])
    Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=None).fit()
    return [v.numpy() for v in model.weights] + [v.numpy() for v in model.current_optimizer.variables]


@pytest.mark.parametrize("kill_at, merge_grad", [(7, 1), (10, 3)])
def test_killed_tf_run_resumes_bitwise(tmp_path, kill_at, merge_grad):
    reference = run(None, merge_grad=merge_grad)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, kill_at=kill_at, merge_grad=merge_grad)
    resumed = run(directory, merge_grad=merge_grad)
    assert len(resumed) == len(reference)
    for got, want in zip(resumed, reference):
        np.testing.assert_array_equal(got, want)
