"""The Estimator loop, trace dispatch and warmup, run on the numpy test backend."""
from __future__ import annotations

import re
from typing import Any, List, Tuple

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace import PerDSTrace, Trace


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def regression_data(n: int = 64, seed: int = 0) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]]) + 0.5).astype(np.float32)
    return NumpyDataset({"x": x, "y": y})


def regression_network(model=None, lr: float = 0.1, extra_ops: List[Any] = ()) -> Any:
    model = model or nb.build(2, 1, lr=lr)
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
           MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
           *extra_ops,
           UpdateOp(model=model, loss_name="mse")]
    return make_network(ops)


class Recorder(Trace):
    """Records every hook call with the mode, epoch and batch index."""

    def __init__(self, log: List[Tuple], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.log = log

    def _add(self, hook: str) -> None:
        self.log.append((hook, self.system.mode, self.system.epoch_idx, self.system.batch_idx))

    def on_begin(self, data: Data) -> None:
        self._add("begin")

    def on_epoch_begin(self, data: Data) -> None:
        self._add("epoch_begin")

    def on_batch_begin(self, data: Data) -> None:
        self._add("batch_begin")

    def on_batch_end(self, data: Data) -> None:
        self._add("batch_end")

    def on_epoch_end(self, data: Data) -> None:
        self._add("epoch_end")

    def on_end(self, data: Data) -> None:
        self._add("end")


def test_fit_and_test_call_hooks_and_ops_in_exact_order():
    log: List[Tuple] = []
    op_log = LambdaOp(fn=lambda x: log.append(("ops", None, None, None)) or x, inputs="x", outputs="x2")
    pipeline = Pipeline(train_data=regression_data(4), eval_data=regression_data(2), test_data=regression_data(2),
                        batch_size=2)
    estimator = Estimator(pipeline=pipeline, network=regression_network(extra_ops=[op_log]), epochs=2,
                          traces=[Recorder(log)], log_steps=None)
    estimator.fit(warmup=False)

    def epoch(mode, e, steps, start=1):
        rows = [("epoch_begin", mode, e, None)]
        for b in range(start, start + steps):
            rows += [("batch_begin", mode, e, b), ("ops", None, None, None), ("batch_end", mode, e, b)]
        return rows + [("epoch_end", mode, e, steps)]

    expected = [("begin", "train", 0, None)]
    for e in (1, 2):
        expected += epoch("train", e, 2) + epoch("eval", e, 1)
    expected += [("end", "train", 2, 1)]
    assert log == expected

    log.clear()
    estimator.test()
    assert log == [("begin", "test", 2, None)] + epoch("test", 2, 1) + [("end", "test", 2, 1)]


def test_training_reduces_the_loss_and_fit_returns_the_named_summary(capsys):
    pipeline = Pipeline(train_data=regression_data(128), eval_data=regression_data(32, seed=1), batch_size=16)
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=5, log_steps=8)
    summary = estimator.fit("regression")
    eval_mse = summary.history["eval"]["mse"]
    assert sorted(eval_mse) == [8, 16, 24, 32, 40]
    values = [float(eval_mse[step]) for step in sorted(eval_mse)]
    assert values[-1] < values[0] / 10
    assert estimator.fit() is None  # unnamed experiments record nothing
    out = capsys.readouterr().out
    assert "FastEstimator-Start: step: 1;" in out
    assert re.search(r"FastEstimator-Train: step: 8; mse: [0-9.e-]+; steps/sec: [0-9.]+;", out)
    assert re.search(r"FastEstimator-Eval: step: 40; epoch: 5; mse: [0-9.e-]+;", out)
    assert "FastEstimator-Finish: step: 40;" in out


def test_log_steps_none_prints_nothing_and_zero_prints_only_epoch_lines(capsys):
    def run(log_steps):
        pipeline = Pipeline(train_data=regression_data(8), batch_size=2)
        Estimator(pipeline=pipeline, network=regression_network(), epochs=1, log_steps=log_steps).fit()
        return capsys.readouterr().out

    assert run(None) == ""
    zero = run(0)
    assert "FastEstimator-Train: step: 4; epoch: 1;" in zero
    assert "FastEstimator-Train: step: 1;" not in zero
    every = run(1)
    assert all(f"FastEstimator-Train: step: {s};" in every for s in (1, 2, 3, 4))


class StepRecorder(Trace):
    """Records (hook, mode, global_step, whether the loss is readable) for every batch hook call."""

    def __init__(self, seen: List[Tuple], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen = seen

    def on_batch_begin(self, data: Data) -> None:
        self.seen.append(("begin", self.system.mode, self.system.global_step, "mse" in data))

    def on_batch_end(self, data: Data) -> None:
        self.seen.append(("end", self.system.mode, self.system.global_step, "mse" in data))


class LogStepRecorder(StepRecorder):
    fe_log_steps_only = True


@pytest.mark.parametrize("log_steps, train_steps", [(3, [1, 3, 6, 9, 12, 15]), (1, list(range(1, 17))), (0, []),
                                                    (None, [])])
def test_a_log_steps_only_trace_is_called_in_training_only_on_log_steps(log_steps, train_steps):
    log_only: List[Tuple] = []
    every: List[Tuple] = []
    pipeline = Pipeline(train_data=regression_data(16), eval_data=regression_data(4), batch_size=2)
    Estimator(pipeline=pipeline, network=regression_network(), epochs=2, log_steps=log_steps,
              traces=[LogStepRecorder(log_only), StepRecorder(every)]).fit(warmup=False)
    expected = []
    for epoch in (1, 2):
        expected += [(hook, "train", step, hook == "end") for step in train_steps if (step - 1) // 8 + 1 == epoch
                     for hook in ("begin", "end")]
        expected += [(hook, "eval", 8 * epoch, hook == "end") for _ in range(2) for hook in ("begin", "end")]
    assert log_only == expected  # and on every eval step
    assert [row[2] for row in every if row[1] == "train" and row[0] == "end"] == list(range(1, 17))


def test_eval_progress_lines(capsys):
    pipeline = Pipeline(train_data=regression_data(4), eval_data=regression_data(6), batch_size=2)
    Estimator(pipeline=pipeline, network=regression_network(), epochs=1, log_steps=100, eval_log_steps=(1, 2, 50)).fit()
    out = capsys.readouterr().out
    assert "Eval Progress: 1/3;" in out
    assert re.search(r"Eval Progress: 2/3; steps/sec: [0-9.]+;", out)
    assert "Eval Progress: 3/3" not in out


def test_epoch_scheduled_batch_size_changes_the_number_of_steps():
    steps: List[Tuple[int, int]] = []

    class Steps(Trace):
        def on_epoch_end(self, data):
            if self.system.mode == "train":
                steps.append((self.system.epoch_idx, self.system.batch_idx))

    pipeline = Pipeline(train_data=regression_data(40), batch_size=EpochScheduler({1: 10, 2: 20, 3: 8}))
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=3, traces=Steps(), log_steps=None)
    estimator.fit()
    assert steps == [(1, 4), (2, 2), (3, 5)]
    assert estimator.system.global_step == 11


def test_multi_dataset_eval_logs_per_dataset_and_combined_keys(capsys):
    pipeline = Pipeline(train_data=regression_data(8),
                        eval_data={"ds1": regression_data(4, seed=1), "ds2": regression_data(6, seed=2)},
                        batch_size=2)
    summary = Estimator(pipeline=pipeline, network=regression_network(), epochs=1, eval_log_steps=(1,)).fit("multi")
    eval_history = summary.history["eval"]
    assert {"mse|ds1", "mse|ds2", "mse"} <= set(eval_history)
    ds1, ds2, combined = (float(eval_history[k][4]) for k in ("mse|ds1", "mse|ds2", "mse"))
    assert min(ds1, ds2) <= combined <= max(ds1, ds2)
    out = capsys.readouterr().out
    assert "Eval Progress (ds1): 1/2;" in out and "Eval Progress (ds2): 1/3;" in out
    eval_line = next(line for line in out.splitlines() if line.startswith("FastEstimator-Eval"))
    assert eval_line.index("mse:") < eval_line.index("mse|ds1:") < eval_line.index("mse|ds2:")


def test_per_ds_trace_hooks_run_once_per_dataset():
    calls: List[Tuple[str, str]] = []

    class PerDS(PerDSTrace):
        def on_ds_begin(self, data):
            calls.append(("ds_begin", self.system.ds_id))

        def on_batch_end(self, data):
            calls.append(("batch", self.system.ds_id))

        def on_ds_end(self, data):
            calls.append(("ds_end", self.system.ds_id))
            data.write_with_log("count", len(calls))

    pipeline = Pipeline(train_data=regression_data(2), eval_data={"a": regression_data(2), "b": regression_data(4)},
                        batch_size=2)
    summary = Estimator(pipeline=pipeline, network=regression_network(), epochs=1, traces=PerDS(mode="eval"),
                        log_steps=0).fit("ds")
    assert calls == [("ds_begin", "a"), ("batch", "a"), ("ds_end", "a"), ("ds_begin", "b"), ("batch", "b"),
                     ("batch", "b"), ("ds_end", "b")]
    assert summary.history["eval"]["count|a"][1] == 3
    assert summary.history["eval"]["count|b"][1] == 7


def test_stop_training_ends_the_run_and_on_end_still_runs():
    ended = []

    class StopAt3(Trace):
        def on_batch_end(self, data):
            if self.system.global_step == 3:
                self.system.stop_training = True

        def on_end(self, data):
            ended.append(self.system.global_step)

    pipeline = Pipeline(train_data=regression_data(20), eval_data=regression_data(4), batch_size=2)
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=5, traces=StopAt3(), log_steps=None)
    estimator.fit()
    assert estimator.system.global_step == 3
    assert ended == [3]


def test_on_end_does_not_run_when_a_step_raises():
    """A failed run is not ended as if it succeeded (issue 30 item 6): no on_end, no Finish line, no final save."""
    ended = []

    class Boom(Trace):
        def on_batch_end(self, data):
            raise RuntimeError("boom")

        def on_end(self, data):
            ended.append(True)

    pipeline = Pipeline(train_data=regression_data(4), batch_size=2)
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=1, traces=Boom(), log_steps=None)
    with pytest.raises(RuntimeError, match="boom"):
        estimator.fit(warmup=False)
    assert ended == []


def test_warmup_reports_a_missing_key_naming_op_key_mode_epoch_and_ds_id():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x_missing", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse", mode="eval")])
    pipeline = Pipeline(train_data=regression_data(4), eval_data={"ds1": regression_data(4)}, batch_size=2)
    with pytest.raises(KeyError) as error:
        Estimator(pipeline=pipeline, network=network, epochs=1).fit()
    message = str(error.value)
    for part in ("ModelOp", "'x_missing'", "mode 'train'", "epoch 1", "ds_id ''"):
        assert part in message


def test_warmup_reports_a_trace_input_nobody_produces():
    class NeedsZ(Trace):
        def __init__(self):
            super().__init__(inputs="z", mode="eval")

    pipeline = Pipeline(train_data=regression_data(4), eval_data=regression_data(4), batch_size=2)
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=1, traces=NeedsZ())
    with pytest.raises(KeyError, match=r"NeedsZ reads key 'z'.*mode 'eval', epoch 1"):
        estimator.fit()


def test_warmup_reports_an_unknown_monitor_name():
    pipeline = Pipeline(train_data=regression_data(4), batch_size=2)
    estimator = Estimator(pipeline=pipeline, network=regression_network(), epochs=1, monitor_names="typo_key")
    with pytest.raises(ValueError, match="typo_key"):
        estimator.fit()


def test_warmup_runs_one_step_per_signature_epoch_and_mode_without_changing_weights():
    model = nb.build(2, 1)
    w0 = model.W.copy()
    network = regression_network(model)
    pipeline = Pipeline(train_data=regression_data(4), eval_data=regression_data(4),
                        batch_size=EpochScheduler({1: 2, 3: 4}))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=4, log_steps=None)
    estimator._prepare_traces({"train", "eval"})
    estimator._warmup(eager=False)
    assert network.steps_run == 4  # signature epochs {1, 3} x modes {train, eval}
    np.testing.assert_array_equal(model.W, w0)


def test_fit_is_repeatable_with_the_same_seed():
    from fe_core.determinism import enable_deterministic

    def run():
        enable_deterministic(7)
        model = nb.build(2, 1, seed=3)
        pipeline = Pipeline(train_data=regression_data(32), batch_size=4)
        Estimator(pipeline=pipeline, network=regression_network(model), epochs=2, log_steps=None).fit()
        return model.W.copy()

    np.testing.assert_array_equal(run(), run())


def test_traces_see_the_epochs_scheduled_optimizer_from_on_epoch_begin(numpy_backend):
    model = nb.build(2, 1, lr=EpochScheduler({1: 0.1, 3: 0.01}))
    seen = []

    class LrAtEpochBegin(Trace):
        def on_epoch_begin(self, data):
            seen.append((self.system.epoch_idx, numpy_backend.get_lr(model)))

    pipeline = Pipeline(train_data=regression_data(4), batch_size=2)
    Estimator(pipeline=pipeline, network=regression_network(model), epochs=3, traces=LrAtEpochBegin(mode="train"),
              log_steps=None).fit()
    assert seen == [(1, 0.1), (2, 0.1), (3, 0.01)]
