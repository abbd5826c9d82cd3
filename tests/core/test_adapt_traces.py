"""The adapt traces (EarlyStopping, LRScheduler, ReduceLROnPlateau, TerminateOnNaN) in real Estimator runs on the
numpy test backend."""
from __future__ import annotations

import functools
import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.checkpoint import get_object_state
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import cosine_decay
from fe_core.trace import Trace
from fe_core.trace.adapt import EarlyStopping, LRScheduler, ReduceLROnPlateau, TerminateOnNaN


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def regression_data(n: int, seed: int = 0) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]]) + 0.5).astype(np.float32)
    return NumpyDataset({"x": x, "y": y})


def make_model(lr: float = 0.1) -> Any:
    return nb.build(2, 1, lr=lr, name="model")


def regression_network(model: Any, extra_ops: Sequence[Any] = ()) -> Any:
    return make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                         *extra_ops,
                         MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                         UpdateOp(model=model, loss_name="mse")])


def pipeline(train: int = 10, evaluation: int = 4) -> Pipeline:
    """`train // 2` training steps per epoch, one eval dataset."""
    return Pipeline(train_data=regression_data(train), eval_data=regression_data(evaluation, seed=1), batch_size=2)


class ScriptedMetric(Trace):
    """Writes `values[epoch - 1]` as `key` at the end of each eval epoch."""

    def __init__(self, values: Sequence[float], key: str = "score") -> None:
        super().__init__(outputs=key, mode="eval")
        self.values = list(values)
        self.key = key

    def on_epoch_end(self, data: Data) -> None:
        data.write_with_log(self.key, self.values[self.system.epoch_idx - 1])


class LrProbe(Trace):
    """Records (global step, learning rate in use) at every training batch."""

    def __init__(self, model: Any) -> None:
        super().__init__(mode="train")
        self.model = model
        self.seen: List[Tuple[int, float]] = []

    def on_batch_end(self, data: Data) -> None:
        self.seen.append((self.system.global_step, self.system.network.backend.get_lr(self.model)))


# ---------------------------------------------------------------------------------------------------- EarlyStopping
def test_early_stopping_stops_after_patience_epochs_without_improvement(capsys):
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=10, log_steps=None,
                          traces=[ScriptedMetric([5.0, 4.0, 4.5, 4.2, 1.0, 0.5]),
                                  EarlyStopping(monitor="score", patience=2)])
    estimator.fit()
    assert estimator.system.epoch_idx == 4
    assert estimator.system.global_step == 4 * 5
    assert "FastEstimator-EarlyStopping: 'score' triggered an early stop. Its best value was 4.0 at epoch 2" in \
        capsys.readouterr().out


def test_early_stopping_min_delta_and_patience_zero():
    # 4.95 is below 5.0 but not by more than min_delta: not an improvement, and patience 0 stops at once
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=10, log_steps=None,
                          traces=[ScriptedMetric([5.0, 4.95, 1.0]),
                                  EarlyStopping(monitor="score", min_delta=-0.1, patience=0)])
    estimator.fit()
    assert estimator.system.epoch_idx == 2


def test_early_stopping_max_compare_with_a_baseline_never_beaten(capsys):
    stopper = EarlyStopping(monitor="score", patience=3, compare="max", baseline=0.9)
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=10, log_steps=None,
                          traces=[ScriptedMetric([0.5, 0.95, 0.7, 0.8, 0.85, 0.99, 0.99]), stopper])
    estimator.fit()
    # 0.95 beats the baseline at epoch 2; then three epochs without a higher value
    assert estimator.system.epoch_idx == 5
    assert (stopper.best, stopper.wait) == (0.95, 3)
    assert "Its best value was 0.95 at epoch 2" in capsys.readouterr().out


def test_early_stopping_counters_restart_on_a_new_fit():
    stopper = EarlyStopping(monitor="score", patience=1)
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=3, log_steps=None,
                          traces=[ScriptedMetric([2.0, 3.0, 3.0]), stopper])
    estimator.fit()
    assert estimator.system.epoch_idx == 2 and stopper.wait == 1
    estimator.fit()  # a new run: best and wait start over, so it again stops at epoch 2 (not at epoch 1)
    assert estimator.system.epoch_idx == 2 and stopper.best == 2.0


def test_early_stopping_rejects_bad_arguments():
    with pytest.raises(ValueError, match="compare must be 'min' or 'max'"):
        EarlyStopping(compare="lowest")
    with pytest.raises(ValueError, match="only one monitor key"):
        EarlyStopping(monitor=["a", "b"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=-1)


def test_early_stopping_names_a_monitor_missing_at_epoch_end():
    class BatchOnly(Trace):  # 'score' exists in eval batches but nobody logs it at the epoch's end
        def __init__(self):
            super().__init__(outputs="score", mode="eval")

        def on_batch_end(self, data):
            data.write_without_log("score", 1.0)

    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=2, log_steps=None,
                          traces=[BatchOnly(), EarlyStopping(monitor="score")])
    with pytest.raises(KeyError, match=r"EarlyStopping monitors 'score'.*end of epoch 1 in mode 'eval'"):
        estimator.fit()


# ---------------------------------------------------------------------------------------------------- LRScheduler
def test_step_based_lr_scheduler_sets_the_rate_every_step_and_logs_it_at_log_steps(numpy_backend):
    model = make_model()
    probe = LrProbe(model)
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=2, log_steps=4,
                          traces=[LRScheduler(model, lr_fn=lambda step: 0.1 / step), probe])
    summary = estimator.fit("lr")
    assert probe.seen == [(step, pytest.approx(0.1 / step)) for step in range(1, 11)]
    assert numpy_backend.get_lr(model) == pytest.approx(0.01)
    logged = summary.history["train"]["model_lr"]
    # at the log steps 1, 4, 8 (by LRScheduler), and at the end (the Finish line, by TrainEssential)
    assert {step: round(float(value), 6) for step, value in logged.items()} == {1: 0.1, 4: 0.025, 8: 0.0125, 10: 0.01}


def test_epoch_based_lr_scheduler_from_a_partial_sets_the_rate_each_epoch():
    def halving(epoch: int, base: float = 0.2) -> float:
        return base * 0.5**(epoch - 1)

    model = make_model()
    probe = LrProbe(model)
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=5,
                          traces=[LRScheduler(model, lr_fn=functools.partial(halving, base=0.4)), probe])
    summary = estimator.fit("lr")
    expected = {1: 0.4, 2: 0.2, 3: 0.1}
    assert probe.seen == [(step, pytest.approx(expected[(step - 1) // 5 + 1])) for step in range(1, 16)]
    logged = summary.history["train"]["model_lr"]
    assert {step: round(float(value), 6) for step, value in logged.items()} == {1: 0.4, 5: 0.4, 10: 0.2, 15: 0.1}


def test_lr_scheduler_follows_cosine_decay():
    model = make_model()
    probe = LrProbe(model)
    lr_fn = lambda step: cosine_decay(step, cycle_length=10, init_lr=0.05)  # noqa: E731
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=2, log_steps=None,
              traces=[LRScheduler(model, lr_fn=lr_fn), probe]).fit()
    assert [lr for _, lr in probe.seen] == [pytest.approx(lr_fn(step)) for step in range(1, 11)]
    assert probe.seen[-1][1] == pytest.approx(1e-6)  # the end of the cycle reaches min_lr


def test_lr_scheduler_rejects_functions_of_anything_but_step_or_epoch():
    model = make_model()
    with pytest.raises(ValueError, match=r"named 'step' or 'epoch'.*\['time', 'cycle_length'.*lambda step"):
        LRScheduler(model, lr_fn=functools.partial(cosine_decay, cycle_length=10, init_lr=0.1))
    with pytest.raises(ValueError, match=r"parameters are \['x'\]"):
        LRScheduler(model, lr_fn=lambda x: 0.1)
    with pytest.raises(ValueError, match=r"parameters are \['step', 'scale'\]"):
        LRScheduler(model, lr_fn=lambda step, scale: 0.1)
    with pytest.raises(ValueError, match="ARC"):
        LRScheduler(model, lr_fn="arc")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------- ReduceLROnPlateau
def test_reduce_lr_on_plateau_reduces_after_patience_epochs(capsys):
    model = make_model(lr=0.1)
    probe = LrProbe(model)
    reducer = ReduceLROnPlateau(model, metric="score", patience=2, factor=0.5)
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model), epochs=6, log_steps=0,
                          traces=[ScriptedMetric([1.0, 1.0, 1.0, 0.5, 0.6, 0.6]), reducer, probe])
    summary = estimator.fit("plateau")
    # epoch 1 improves; 2, 3 do not -> halved after epoch 3; 4 improves; 5, 6 do not -> halved after epoch 6
    lr_per_epoch = {(step - 1) // 5 + 1: lr for step, lr in probe.seen}
    assert lr_per_epoch == {1: 0.1, 2: 0.1, 3: 0.1, 4: pytest.approx(0.05), 5: pytest.approx(0.05),
                            6: pytest.approx(0.05)}
    assert {step: round(float(lr), 6) for step, lr in summary.history["eval"]["model_lr"].items()} == \
        {15: 0.05, 30: 0.025}
    assert (reducer.best, reducer.wait) == (0.5, 0)
    out = capsys.readouterr().out
    assert out.count("FastEstimator-ReduceLROnPlateau: learning rate reduced to") == 2
    assert "FastEstimator-ReduceLROnPlateau: learning rate reduced to 0.025" in out


def test_reduce_lr_on_plateau_never_goes_below_min_lr(numpy_backend):
    model = make_model(lr=0.1)
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=4, log_steps=None,
              traces=[ScriptedMetric([1.0, 2.0, 3.0, 4.0]),
                      ReduceLROnPlateau(model, metric="score", patience=1, factor=0.1, min_lr=0.005)]).fit()
    assert numpy_backend.get_lr(model) == pytest.approx(0.005)


def test_reduce_lr_on_plateau_max_mode():
    model = make_model(lr=0.1)
    reducer = ReduceLROnPlateau(model, metric="score", patience=1, factor=0.5, best_mode="max")
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
              traces=[ScriptedMetric([0.5, 0.9, 0.8]), reducer]).fit()
    assert reducer.best == 0.9
    assert nb.NumpyBackend().get_lr(model) == pytest.approx(0.05)


def test_reduce_lr_on_plateau_defaults_to_the_models_loss():
    model = make_model()
    reducer = ReduceLROnPlateau(model, patience=100)
    assert reducer.metric is None
    Estimator(pipeline=pipeline(), network=regression_network(model), epochs=2, log_steps=None,
              traces=reducer).fit()
    assert reducer.metric == "mse" and reducer.inputs == ["mse"] and reducer.outputs == ["model_lr"]
    assert math.isfinite(reducer.best) and reducer.best > 0


def test_reduce_lr_on_plateau_without_a_loss_to_infer_says_so():
    model = make_model()
    other = nb.build(2, 1, name="other")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            ModelOp(model=other, inputs="x", outputs="y_other"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            MeanSquaredError(inputs=("y_other", "y"), outputs="mse2"),
                            UpdateOp(model=other, loss_name="mse2")])
    estimator = Estimator(pipeline=pipeline(), network=network, epochs=1, log_steps=None,
                          traces=ReduceLROnPlateau(model))
    with pytest.raises(ValueError, match=r"ReduceLROnPlateau cannot infer the loss of model 'model'.*metric="):
        estimator.fit()


def test_reduce_lr_on_plateau_with_two_losses_asks_for_the_metric():
    model = make_model()
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse_b"),
                            UpdateOp(model=model, loss_name="mse"),
                            UpdateOp(model=model, loss_name="mse_b")])
    estimator = Estimator(pipeline=pipeline(), network=network, epochs=1, log_steps=None,
                          traces=ReduceLROnPlateau(model))
    with pytest.raises(ValueError, match=r"several losses \['mse', 'mse_b'\]"):
        estimator.fit()
    with pytest.raises(ValueError, match="best_mode"):
        ReduceLROnPlateau(model, best_mode="lowest")


# ---------------------------------------------------------------------------------------------------- TerminateOnNaN
def nan_at_step(holder: Dict[str, Any], step: int) -> LambdaOp:
    """A train op that turns the targets into NaN at one global step (so that step's loss is NaN)."""
    def poison(y):
        return y * np.nan if holder["estimator"].system.global_step == step else y
    return LambdaOp(fn=poison, inputs="y", outputs="y", mode="train")


class HookLog(Trace):
    def __init__(self):
        super().__init__()
        self.calls: List[Tuple[str, str, int]] = []

    def on_epoch_end(self, data):
        self.calls.append(("epoch_end", self.system.mode, self.system.epoch_idx))


def test_terminate_on_nan_stops_at_the_step_with_a_nan_loss(capsys):
    holder: Dict[str, Any] = {}
    model = make_model()
    log = HookLog()
    estimator = Estimator(pipeline=pipeline(), network=regression_network(model, [nan_at_step(holder, 7)]), epochs=3,
                          log_steps=None, traces=[TerminateOnNaN(), log])
    holder["estimator"] = estimator
    estimator.fit()
    assert estimator.system.global_step == 7
    assert log.calls == [("epoch_end", "train", 1), ("epoch_end", "eval", 1)]  # epoch 2 ended at its 2nd step
    out = capsys.readouterr().out
    assert "FastEstimator-TerminateOnNaN: NaN Detected in: mse at step 7 (mode train, epoch 2, batch 2); value: nan" \
        in out


def test_without_terminate_on_nan_the_nan_run_goes_on():
    holder: Dict[str, Any] = {}
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model(), [nan_at_step(holder, 7)]),
                          epochs=3, log_steps=None)
    holder["estimator"] = estimator
    estimator.fit()
    assert estimator.system.global_step == 15


def test_terminate_on_nan_checks_named_trace_outputs_at_epoch_end(capsys):
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=4, log_steps=None,
                          traces=[ScriptedMetric([1.0, math.inf, 2.0]),
                                  TerminateOnNaN(monitor_names="score", mode="eval")])
    estimator.fit()
    assert (estimator.system.epoch_idx, estimator.system.global_step) == (2, 10)
    assert "NaN Detected in: score at the end of epoch 2 (mode eval, step 10); value: inf" in capsys.readouterr().out


def test_terminate_on_nan_star_watches_every_trace_output():
    class Notes(Trace):  # a non-numeric output never counts as NaN
        def __init__(self):
            super().__init__(outputs="note", mode="eval")

        def on_epoch_end(self, data):
            data.write_with_log("note", "fine")

    terminator = TerminateOnNaN(monitor_names="*", mode="eval")
    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=4, log_steps=None,
                          traces=[ScriptedMetric([1.0, 2.0, np.float32("nan")]), Notes(), terminator])
    estimator.fit()
    assert estimator.system.epoch_idx == 3
    assert terminator.monitor_keys == ["mse", "note", "score"]


def test_terminate_on_nan_reports_per_sample_arrays(capsys):
    class PerSample(Trace):
        def __init__(self):
            super().__init__(outputs="per_sample", mode="eval")

        def on_batch_end(self, data):
            data.write_without_log("per_sample", np.array([0.5, np.nan, np.inf]))

    estimator = Estimator(pipeline=pipeline(), network=regression_network(make_model()), epochs=2, log_steps=None,
                          traces=[PerSample(), TerminateOnNaN(monitor_names="per_sample", mode="eval")])
    estimator.fit()
    assert estimator.system.epoch_idx == 1
    out = capsys.readouterr().out
    assert "NaN Detected in: per_sample at step 5 (mode eval, epoch 1, batch 1); value: array of shape (3,) with 1 " \
           "NaN and 1 infinite value(s)" in out


# ---------------------------------------------------------------------------------------------------- checkpoint state
def test_adapt_trace_state_is_plain_data_and_round_trips_through_save_state(tmp_path):
    def build(values):
        model = make_model()
        traces = [ScriptedMetric(values), EarlyStopping(monitor="score", patience=5),
                  ReduceLROnPlateau(model, metric="score", patience=5), LRScheduler(model, lambda epoch: 0.1 / epoch),
                  TerminateOnNaN()]
        return Estimator(pipeline=pipeline(), network=regression_network(model), epochs=3, log_steps=None,
                         traces=traces), traces

    estimator, traces = build([3.0, 1.0, 2.0])
    estimator.fit()
    stopper, reducer = traces[1], traces[2]
    assert (stopper.best, stopper.wait, reducer.best, reducer.wait) == (1.0, 1, 1.0, 1)
    state = get_object_state(stopper)
    assert {"best", "wait"} <= set(state) and "system" not in state
    # numbers given to the constructor are data a checkpoint restores (as FastEstimator does); the names of keys and
    # comparisons, models and callables are the script's configuration, never in a checkpoint
    assert {"patience", "min_delta"} <= set(state) and not {"monitor", "compare"} & set(state)
    assert "model" not in get_object_state(reducer) and "lr_fn" not in get_object_state(traces[3])
    estimator.system.save_state(str(tmp_path / "ckpt"))

    fresh, fresh_traces = build([0.0, 0.0, 0.0])
    assert (fresh_traces[1].best, fresh_traces[1].wait) == (math.inf, 0)
    fresh.system.load_state(str(tmp_path / "ckpt"))
    assert (fresh_traces[1].best, fresh_traces[1].wait) == (1.0, 1)
    assert (fresh_traces[2].best, fresh_traces[2].wait) == (1.0, 1)
    assert fresh_traces[3].schedule_mode == "epoch"
