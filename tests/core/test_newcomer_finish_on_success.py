"""Issue 30 item 6: `FastEstimator-Finish` and every trace's `on_end` only after a run that ended; a crash or a
Ctrl-C prints one line saying where the run stopped (and which checkpoint a re-run resumes from), and a Ctrl-C comes
back as a short KeyboardInterrupt instead of a traceback through the framework's internals."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io.restore_wizard import RestoreWizard

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


class Stop(Trace):
    """Raises `error` at global step `step` and records whether on_end ran."""

    def __init__(self, step, error):
        super().__init__(mode="train")
        self.step, self.error, self.ended = step, error, False

    def on_batch_end(self, data: Data) -> None:
        if self.step and self.system.global_step == self.step:
            raise self.error

    def on_end(self, data: Data) -> None:
        self.ended = True


def _estimator(traces):
    x = np.random.default_rng(0).normal(size=(32, 2)).astype(np.float32)
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    return Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": x[:, :1]}), batch_size=4),
                     network=network, epochs=3, traces=traces, log_steps=4)


def test_a_run_that_ends_prints_finish_and_ends_its_traces(capsys):
    stop = Stop(0, None)
    _estimator([stop]).fit()
    assert "FastEstimator-Finish: step: 24;" in capsys.readouterr().out
    assert stop.ended


def test_a_failed_run_does_not_finish_and_says_where_it_stopped(capsys):
    stop = Stop(10, RuntimeError("disk full"))
    with pytest.raises(RuntimeError, match="disk full"):
        _estimator([stop]).fit()
    captured = capsys.readouterr()
    assert "FastEstimator-Finish" not in captured.out
    assert not stop.ended
    assert captured.err.strip().splitlines()[-1] == "FastEstimator-Failed: step 10 (train epoch 2) by RuntimeError"


def test_an_interrupt_names_the_checkpoint_to_resume_from(capsys, tmp_path):
    stop = Stop(13, KeyboardInterrupt())
    wizard = RestoreWizard(directory=str(tmp_path / "ckpt"), frequency=1)  # a checkpoint every epoch (8 steps)
    with pytest.raises(KeyboardInterrupt) as info:
        _estimator([stop, wizard]).fit()
    captured = capsys.readouterr()
    assert "FastEstimator-Finish" not in captured.out and not stop.ended
    assert captured.err.strip().splitlines()[-1] == (
        f"FastEstimator-Interrupted: step 13 (train epoch 2); re-run the script to resume from "
        f"{tmp_path / 'ckpt' / 'step-8'}")
    assert info.value.__suppress_context__ and info.value.__cause__ is None
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [frame.name for frame in frames][-2:] == ["fit", "_start"]  # not the step and trace internals
    assert len(frames) == 3


@pytest.mark.slow
def test_ctrl_c_in_a_script_prints_a_short_traceback():
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import test_newcomer_finish_on_success as t
        import numpy_backend as nb
        nb.install()
        t._estimator([t.Stop(5, KeyboardInterrupt())]).fit()
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert "FastEstimator-Finish" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert "FastEstimator-Interrupted: step 5 (train epoch 1)" in lines
    assert len(lines) <= 12, result.stderr
    assert lines[-1].startswith("KeyboardInterrupt: fe: interrupted at step 5")
