"""Issue 45 item 1: a data-parallel run logs the loss one process logs for the same data and weights. One process
averages the batches' means (FastEstimator's rule); each rank holds its part of every global batch, so the ranks'
sums and counts are reduced per global batch. Ranks simulated by threads; the real torchrun launches are in
tests/torch/test_newcomer_round5_distributed.py."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.distributed import get_communicator, global_batches, rank_part
from fe_core.distributed.threads import ThreadGroup
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
