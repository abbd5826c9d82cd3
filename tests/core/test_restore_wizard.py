"""RestoreWizard: a run killed at any step and started again ends exactly like an uninterrupted run."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp as NumpyLambda
from fe_core.op.numpyop.meta import Sometimes
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard

# Timings differ between runs; a resumed run also records its own Start line (device count, logging interval).
TIMING_KEYS = {"steps/sec", "epoch_time(sec)", "total_time(sec)", "num_device", "logging_interval"}


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    """Simulates a crash (an exception) at the end of a given training step."""

    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}  # the crash is outside the run's state

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def run(directory: Optional[str], frequency: Any = "3s", kill_at: Optional[int] = None, merge_grad: int = 1,
        deterministic: bool = False) -> Dict[str, Any]:
    """What a user's script does: build everything from scratch, then fit (a fresh 'process' each time)."""
    if deterministic:
        enable_deterministic(42)
    else:
        np.random.seed(0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + 0.3).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:10], "y": y[:10]}),
                        batch_size=5,
                        ops=[Sometimes(NumpyLambda(fn=lambda v: v + np.random.normal(size=v.shape).astype(np.float32),
                                                   inputs="x", outputs="x", mode="train"), prob=0.5)])
    model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse", merge_grad=merge_grad)])
    traces: List[Trace] = [KillAt(kill_at)]  # the same script both times; only the crash differs
    if directory is not None:
        traces.append(RestoreWizard(directory, frequency=frequency))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=2)
    summary = estimator.fit("resume")
    return {"W": model.W.copy(), "b": model.b.copy(), "summary": summary, "step": estimator.system.global_step}


def history(summary) -> Dict[str, Any]:
    return {(mode, key): {step: float(np.asarray(value)) for step, value in steps.items()}
            for mode, keys in summary.history.items() for key, steps in keys.items() if key not in TIMING_KEYS}


@pytest.mark.parametrize("kill_at, frequency", [(4, "3s"), (8, "3s"), (17, "2s"), (14, 1), (7, "1s")])
def test_killed_run_resumes_to_bitwise_identical_weights_and_full_history(tmp_path, kill_at, frequency, capsys):
    reference = run(None)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, frequency=frequency, kill_at=kill_at)
    resumed = run(directory, frequency=frequency)
    assert "FastEstimator-RestoreWizard: restored" in capsys.readouterr().out
    assert resumed["step"] == reference["step"] == 24
    np.testing.assert_array_equal(resumed["W"], reference["W"])
    np.testing.assert_array_equal(resumed["b"], reference["b"])
    assert history(resumed["summary"]) == history(reference["summary"])


def test_resume_mid_merge_grad_group_and_in_deterministic_mode(tmp_path):
    reference = run(None, merge_grad=4, deterministic=True)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, frequency="5s", kill_at=12, merge_grad=4, deterministic=True)  # checkpoint at step 10: 2 of 4
    resumed = run(directory, frequency="5s", merge_grad=4, deterministic=True)
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_a_damaged_newest_checkpoint_is_refused_and_the_previous_one_is_used(tmp_path, capsys):
    reference = run(None)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, frequency="3s", kill_at=10)
    assert sorted(os.listdir(directory)) == ["key.txt", "step-6", "step-9"]  # key.txt: the newest, as in FE
    with open(os.path.join(directory, "step-9", "arrays.npz"), "r+b") as file:
        file.truncate(10)
    resumed = run(directory, frequency="3s")
    out = capsys.readouterr().out
    assert "refusing checkpoint" in out and "step-9" in out and "arrays.npz" in out
    assert "restored" in out and "step-6" in out
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_only_the_newest_checkpoints_are_kept_and_a_finished_run_resumes_to_the_end(tmp_path):
    directory = str(tmp_path / "ckpt")
    first = run(directory, frequency="2s")
    assert sorted(os.listdir(directory)) == ["key.txt", "step-22", "step-24"]
    again = run(directory, frequency="2s")  # everything was done: nothing more trains
    np.testing.assert_array_equal(again["W"], first["W"])


def test_frequency_arguments_are_checked():
    with pytest.raises(ValueError, match="(?i)frequency"):
        RestoreWizard("d", frequency="often")
    with pytest.raises(ValueError, match="keep"):
        RestoreWizard("d", keep=0)
