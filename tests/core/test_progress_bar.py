"""ProgressBar: what a person watching a terminal sees."""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Logger, ProgressBar


@pytest.fixture(autouse=True)
def numpy_backend():
    nb.install()
    yield
    nb.uninstall()


def estimator(traces=(), log_steps=None, epochs=2, **kwargs):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": x.sum(axis=1, keepdims=True)})
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    return Estimator(pipeline=Pipeline(train_data=data, eval_data=data, batch_size=10), network=network,
                     epochs=epochs, traces=list(traces), log_steps=log_steps, **kwargs)


def test_the_bar_shows_epoch_progress_rate_and_loss_and_clears_itself():
    stream = io.StringIO()
    estimator(traces=[ProgressBar(file=stream, refresh_seconds=0, use_tqdm=False)]).fit()
    text = stream.getvalue()
    assert "train epoch 1/2: [" in text and "4/4" in text and "eval epoch 2/2" in text
    assert "steps/s" in text and "mse " in text and "step 3" in text
    last_line = text.rstrip("\n").rsplit("\n", 1)[-1]
    assert text.endswith("\n") and "4/4" in last_line  # a finished epoch's bar stays on screen, complete


def test_estimator_adds_a_bar_before_the_logger_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    est = estimator(log_steps=1, epochs=1)
    est._prepare_traces({"train", "eval"})
    kinds = [type(t) for t in est.traces_in_use]
    assert ProgressBar in kinds and kinds.index(ProgressBar) < kinds.index(Logger)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    est = estimator(log_steps=1, epochs=1)
    est._prepare_traces({"train", "eval"})
    assert ProgressBar not in [type(t) for t in est.traces_in_use]


def test_the_bar_clears_before_each_log_line():
    stream = io.StringIO()
    estimator(traces=[ProgressBar(file=stream, refresh_seconds=0, use_tqdm=False)], log_steps=2, epochs=1).fit()
    text = stream.getvalue()
    # at steps 1, 2 and 4 the Logger prints, so the bar only clears; at step 3 it draws; the finished bar names step 4
    assert "step 3" in text and "step 2;" not in text
    train_line = [line for line in text.split("\r") if "train epoch" in line][-1]
    assert "4/4 step 4;" in train_line


def test_the_bar_is_told_about_steps_only_when_it_redraws(monkeypatch):
    import fe_core.trace.progress_bar as progress_bar
    updates = []

    class CountingBar(progress_bar._PlainBar):
        def update(self, count):
            updates.append(count)
            super().update(count)

    monkeypatch.setattr(progress_bar, "_make_bar", lambda total, desc, file, use_tqdm: CountingBar(total, desc, file))
    estimator(traces=[ProgressBar(file=io.StringIO(), refresh_seconds=3600)]).fit()
    assert updates == [4, 4, 4, 4]  # never redrawn within an hour: told once per epoch and mode, when it ends


class Chatty(Logger.__mro__[1]):  # a Trace that prints mid-epoch, as BestModelSaver and friends do
    def __init__(self):
        super().__init__(mode="eval")

    def on_batch_end(self, data):
        print("FastEstimator-Chatty: ", end="")
        print(f"message at batch {self.system.batch_idx}")


@pytest.mark.parametrize("use_tqdm", [False, True])
def test_lines_printed_while_a_bar_is_live_never_run_into_it(monkeypatch, use_tqdm):
    """On a terminal the bar (stderr) and the log (stdout) share one screen: simulate it with one stream."""
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stdout", screen)
    estimator(traces=[ProgressBar(file=screen, refresh_seconds=0, use_tqdm=use_tqdm), Chatty()], log_steps=1,
              epochs=1, eval_log_steps=[1, 2]).fit()
    assert sys.stdout is screen  # handed back after the run
    text = screen.getvalue()
    for marker in ("FastEstimator-Chatty: message at batch", "FastEstimator-Train: step: 1;", "Eval Progress",
                   "FastEstimator-Eval:"):
        assert marker in text, marker
    for line in text.split("\n"):
        visible = line.rsplit("\r", 1)[-1].replace("\033[K", "")  # what remains on screen of this line
        if "FastEstimator-" in line:
            assert visible.lstrip().startswith(("FastEstimator-", "Eval Progress")), repr(line)
            assert "train epoch" not in visible and "eval epoch" not in visible, repr(line)
    assert "it/s" not in text  # one rate: fe's steps/s
