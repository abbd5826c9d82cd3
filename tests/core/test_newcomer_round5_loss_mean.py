"""Issue 45 item 1: a data-parallel run logs the loss one process logs for the same data and weights. One process
averages the batches' means (FastEstimator's rule); each rank holds its part of every global batch, so the ranks'
sums and counts are reduced per global batch. At a training log step each monitored per-batch mean is the whole
global batch's (the ranks' means weighted by their samples). Ranks simulated by threads; the real torchrun (DDP,
sharded) and TF_CONFIG launches are in tests/fe/test_trace_matrix.py and tests/fe/test_newcomer_round5_distributed.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.distributed import LocalCommunicator, batch_scalar_means, get_communicator, global_batches, rank_part
from fe_core.distributed.threads import ThreadGroup
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace import EvalEssential, TestEssential
from trace_helpers import make_system

SAMPLES = 27  # not divisible by the batch size: a short last batch counts as much as a full one in one process
BATCH = 8
LOSSES = np.random.RandomState(3).gamma(2.0, 1.0, SAMPLES).astype(np.float32)  # per-sample losses
VECTORS = np.random.RandomState(4).normal(size=(SAMPLES, 3)).astype(np.float32)  # a monitored key of shape (3,)


def _epoch(trace_class, batches_per_ds):
    trace = trace_class(monitor_names=["ce", "vec"])
    system = make_system(trace, mode="eval" if trace_class is EvalEssential else "test")
    trace.on_epoch_begin(Data())
    for ds_id, batches in batches_per_ds.items():
        system.ds_id = ds_id
        for indices in batches:
            system.batch_samples = len(indices)
            trace.on_batch_end(Data({"ce": LOSSES[indices].mean(), "vec": VECTORS[indices].mean(axis=0)}))
    system.ds_id = ""
    end = Data()
    trace.on_epoch_end(end)
    return end.read_logs()


def _batches(order, world):
    return global_batches(order, BATCH, False, world)


@pytest.mark.parametrize("trace_class", [EvalEssential, TestEssential])
def test_two_ranks_log_the_mean_of_batch_means_one_process_logs(trace_class):
    datasets = {"": np.arange(SAMPLES)}
    single = _epoch(trace_class, {ds: _batches(order, 1) for ds, order in datasets.items()})
    assert single["ce"] != pytest.approx(LOSSES.mean(), rel=1e-4)  # the data tells the two rules apart

    def rank_work():
        comm = get_communicator()
        return _epoch(trace_class, {ds: [rank_part(batch, comm.world_size, comm.rank)
                                         for batch in _batches(order, comm.world_size)]
                                    for ds, order in datasets.items()})

    for logs in ThreadGroup(2).run(rank_work) + ThreadGroup(3).run(rank_work):
        assert logs["ce"] == pytest.approx(single["ce"], rel=1e-6)
        assert type(logs["ce"]) is np.float32
        np.testing.assert_allclose(logs["vec"], single["vec"], rtol=1e-6)


def test_named_datasets_log_their_own_and_the_overall_mean_as_one_process_does():
    datasets = {"a": np.arange(0, 19), "b": np.arange(19, SAMPLES)}
    single = _epoch(EvalEssential, {ds: _batches(order, 1) for ds, order in datasets.items()})
    assert set(single) >= {"ce", "ce|a", "ce|b"}

    def rank_work():
        comm = get_communicator()
        return _epoch(EvalEssential, {ds: [rank_part(batch, 2, comm.rank) for batch in _batches(order, 2)]
                                      for ds, order in datasets.items()})

    for logs in ThreadGroup(2).run(rank_work):
        for key in ("ce", "ce|a", "ce|b"):
            assert logs[key] == pytest.approx(single[key], rel=1e-6), key


# ---------------------------------------------------------------------------------------- the training loss
PARTS = (np.arange(0, 3), np.arange(3, 5))  # a global batch of 5 samples: rank 0 holds 3 of them, rank 1 holds 2


def test_a_training_step_s_loss_over_ranks_is_the_whole_batch_s_weighted_by_samples():
    """The combination rule (sum of each rank's mean * its samples / all samples), ranks simulated by threads."""
    losses = LOSSES[:5]

    def rank_work():
        part = PARTS[get_communicator().rank]
        step = {"ce": losses[part].mean(), "mse": np.asarray(losses[part].mean() * 2), "py": float(losses[part][0]),
                "count": np.int64(len(part)), "sample_ce": losses[part], "other": "text"}
        batch_scalar_means(step, ["ce", "count", "missing", "mse", "other", "py", "sample_ce"], samples=len(part))
        return step

    whole = float(np.mean(losses, dtype=np.float64))
    assert whole != pytest.approx(np.mean([losses[part].mean() for part in PARTS]), rel=1e-4)  # weights matter
    for rank, step in enumerate(ThreadGroup(2).run(rank_work)):
        assert type(step["ce"]) is np.float32 and step["ce"] == pytest.approx(whole, rel=1e-6)
        assert isinstance(step["mse"], np.ndarray) and step["mse"].shape == () and step["mse"].dtype == np.float32
        assert float(step["mse"]) == pytest.approx(2 * whole, rel=1e-6)
        assert type(step["py"]) is float and step["py"] == pytest.approx((losses[0] * 3 + losses[3] * 2) / 5)
        # integers, per-sample arrays and other values are this rank's own
        assert step["count"] == len(PARTS[rank]) and step["other"] == "text" and "missing" not in step
        np.testing.assert_array_equal(step["sample_ce"], losses[PARTS[rank]])


def test_one_process_keeps_its_values_and_runs_no_collective():
    class NoCollective(LocalCommunicator):
        def _all_reduce(self, array, op):
            raise AssertionError("a collective in a one-process run")

    step = {"ce": np.float32(0.25)}
    batch_scalar_means(step, ["ce"], samples=4, communicator=NoCollective())
    assert type(step["ce"]) is np.float32 and step["ce"] == np.float32(0.25)


class _Seen(Trace):
    """Records, at each step, this rank's per-sample squared errors and the logged values Traces read."""

    def __init__(self) -> None:
        super().__init__(inputs=["se", "se_z", "mse", "mse_z"], mode="train")
        self.steps = {}

    def get_state(self):
        return {}

    def on_batch_end(self, data) -> None:
        self.steps[self.system.global_step] = {key: np.array(data[key]) for key in self.inputs}


def _fit(calls):
    """Train a linear model (learning rate 0: the weights stay as built on every rank) for 2 epochs of 8 steps of 5
    samples (parts of 3 and 2 over 2 ranks), logging every 3 steps: the loss `mse` and the monitored key `mse_z`
    (another per-batch mean, not the loss of an UpdateOp). Returns what `_Seen` saw, the Summary's train history of
    the two keys, and how many combinations ran."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + rng.normal(0, 1, size=(40, 1))).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y, "z": np.abs(y)}), batch_size=5)
    model = nb.build(2, 1, lr=0.0, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="se", average_loss=False),
                            MeanSquaredError(inputs=("y_pred", "z"), outputs="mse_z"),
                            MeanSquaredError(inputs=("y_pred", "z"), outputs="se_z", average_loss=False),
                            UpdateOp(model=model, loss_name="mse")])
    seen = _Seen()
    summary = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=3, traces=[seen],
                        monitor_names="mse_z").fit("run")
    return seen.steps, {key: dict(summary.history["train"][key]) for key in ("mse", "mse_z")}, len(calls)


def test_two_ranks_log_the_whole_batch_s_training_loss_with_a_collective_only_at_log_steps(monkeypatch):
    import fe_core.estimator as estimator_module  # pylint: disable=import-outside-toplevel
    calls = []

    def counted(values, keys, samples):
        calls.append(get_communicator().rank)
        batch_scalar_means(values, keys, samples)

    monkeypatch.setattr(estimator_module, "batch_scalar_means", counted)
    nb.install()
    try:
        _, single, single_calls = _fit(calls)
        calls.clear()
        (seen0, history0, _), (seen1, history1, _) = ThreadGroup(2).run(_fit, calls)
    finally:
        nb.uninstall()
    log_steps = [1, 3, 6, 9, 12, 15]
    assert sorted(single["mse"]) == sorted(single["mse_z"]) == log_steps
    assert single_calls == 0  # one process: nothing added to its steps
    assert sorted(calls) == [0] * len(log_steps) + [1] * len(log_steps)  # each rank: one collective per log step
    assert [len(seen0[1]["se"]), len(seen1[1]["se"])] == [3, 2]
    differs = 0
    for key, samples in (("mse", "se"), ("mse_z", "se_z")):
        for step in log_steps:
            whole = np.concatenate([seen0[step][samples], seen1[step][samples]]).mean()  # one process's value
            for seen, history in ((seen0, history0), (seen1, history1)):
                assert seen[step][key] == pytest.approx(whole, rel=1e-6), (key, step)  # what every trace reads
                assert history[key][step] == pytest.approx(whole, rel=1e-6), (key, step)  # logged
            differs += abs(np.mean([seen0[step][samples].mean(), seen1[step][samples].mean()]) - whole) > 1e-3
        # between log steps each rank keeps its own part's loss (no collective there)
        assert seen0[2][key] == pytest.approx(seen0[2][samples].mean(), rel=1e-6)
    assert differs  # the samples' weights matter: a mean of the ranks' means is not the whole batch's
