"""Issue 30 item 10: the finished bar names the epoch's last step (`79/79 [... step 79 ...]`, not step 77), a
60-column terminal keeps a visible bar and uncut text, and the bar has the same width on every line."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import ProgressBar
from fe_core.trace.progress_bar import fit_postfix


@pytest.fixture(autouse=True)
def numpy_backend():
    nb.install()
    yield
    nb.uninstall()


def _screen(use_tqdm: bool, refresh_seconds: float) -> str:
    x = np.random.default_rng(0).normal(size=(70, 2)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": x.sum(axis=1, keepdims=True)})
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="a_rather_long_loss_name"),
                            UpdateOp(model=model, loss_name="a_rather_long_loss_name")])
    stream = io.StringIO()
    Estimator(pipeline=Pipeline(train_data=data, eval_data=data, batch_size=10), network=network, epochs=1,
              traces=[ProgressBar(file=stream, refresh_seconds=refresh_seconds, use_tqdm=use_tqdm)],
              log_steps=None).fit()
    return stream.getvalue()


def _drawn(text: str):
    """Every line the bar drew (the text after each carriage return), without the clear-line codes."""
    return [part.replace("\033[K", "").rstrip("\n") for part in re.split(r"[\r\n]", text)
            if part.replace("\033[K", "").strip()]


@pytest.mark.parametrize("use_tqdm", [False, True])
def test_the_finished_bar_names_the_last_step_and_batch(use_tqdm, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    lines = _drawn(_screen(use_tqdm, refresh_seconds=1e-9))
    train = [line for line in lines if "train epoch" in line][-1]
    evaluation = [line for line in lines if "eval epoch" in line][-1]
    assert "7/7" in train and "step 7;" in train
    assert "7/7" in evaluation and "batch 7;" in evaluation


@pytest.mark.parametrize("use_tqdm", [False, True])
def test_a_narrow_terminal_keeps_a_fixed_bar_and_uncut_lines(use_tqdm, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    lines = _drawn(_screen(use_tqdm, refresh_seconds=1e-9))
    assert lines
    widths = set()
    for line in lines:
        assert len(line) <= 60, line
        bar = re.search(r"[|\[]([^|\]]*)[|\]]", line)
        assert bar is not None, line
        widths.add(len(bar.group(1)))
    assert widths == {10}  # the same visible bar on every line, never collapsed to one cell
    assert any("step 7" in line for line in lines)  # the step itself always fits


def test_fitting_drops_monitored_values_before_the_step():
    assert fit_postfix(["step 123", "9.1 steps/s", "ce 0.25"], 40) == "step 123; 9.1 steps/s; ce 0.25"
    assert fit_postfix(["step 123", "9.1 steps/s", "ce 0.25"], 23) == "step 123; 9.1 steps/s"
    assert fit_postfix(["step 123", "9.1 steps/s"], 4) == "step"
