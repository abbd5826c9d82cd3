"""fe_core.distributed without a framework: ranks simulated by threads (`ThreadGroup`), each with its own communicator.

Checks what a data-parallel user sees: every sample once per epoch with equal step counts on every rank, the
remainder policy, and metrics / logged evaluation means equal to one process's on the same samples.
"""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.distributed import (LocalCommunicator, gather_stats, get_communicator, global_batches, is_main_process,
                                 launcher_env, rank_part)
from fe_core.distributed.threads import ThreadGroup
from fe_core.op.numpyop.univariate import Minmax
from fe_core.pipeline import Pipeline
from fe_core.trace import EvalEssential
from fe_core.trace.metric import Accuracy
from fe_core.trace.metric.auc import AUCScore
from fe_core.trace.metric.dice import Dice
from trace_helpers import make_system, run_epoch


# ---------------------------------------------------------------------------------------------- launcher, local
def test_launcher_env_reads_torchrun_variables():
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "1234"}
    assert launcher_env(env) == {"rank": 3, "world_size": 4, "local_rank": 1, "master_addr": "10.0.0.1",
                                 "master_port": "1234"}
    assert launcher_env({}) is None
    assert launcher_env({"RANK": "0", "WORLD_SIZE": "1"}) is None  # one process is not distributed
    with pytest.raises(ValueError, match="RANK=4 is out of range"):
        launcher_env({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(ValueError, match="must be integers"):
        launcher_env({"RANK": "a", "WORLD_SIZE": "2"})


def test_single_process_communicator_returns_its_input():
    comm = get_communicator()
    assert isinstance(comm, LocalCommunicator) and comm.world_size == 1 and is_main_process()
    assert comm.all_reduce(np.array([1, 2])).tolist() == [1, 2]
    assert [a.tolist() for a in comm.all_gather(np.array([5.0]))] == [[5.0]]
    with pytest.raises(ValueError, match="op must be one of"):
        comm.all_reduce(np.ones(2), op="mean")


# ---------------------------------------------------------------------------------------------- collectives
def test_thread_ranks_reduce_gather_and_broadcast():
    def work():
        comm = get_communicator()
        rank = comm.rank
        return (comm.all_reduce(np.array([rank, 10 * rank], dtype=np.int32)).tolist(),
                comm.all_reduce(np.array(rank + 0.5), op="max").item(),
                comm.all_reduce(np.array(rank + 0.5), op="min").item(),
                [a.tolist() for a in comm.all_gather(np.arange(rank + 1, dtype=np.int16))],
                comm.broadcast(np.array([7 + rank]), root=1).tolist(),
                comm.all_gather_bytes(b"x" * rank),
                comm.all_reduce(np.array([1], dtype=np.int32)).dtype.name)

    first, second, third = ThreadGroup(3).run(work)
    assert first == second == third
    assert first == ([3, 30], 2.5, 0.5, [[0], [0, 1], [0, 1, 2]], [8], [b"", b"x", b"xx"], "int32")


def test_gather_stats_brings_every_rank_s_parts_per_ds_id():
    def work():
        rank = get_communicator().rank
        local = {"a": {"n": np.array(rank + 1)}} if rank else {"a": {"n": np.array(1)}, "b": {"x": np.zeros((0, 2))}}
        return {ds: [{k: v.tolist() for k, v in part.items()} for part in parts]
                for ds, parts in gather_stats(local).items()}

    result = ThreadGroup(2).run(work)
    assert result[0] == result[1] == {"a": [{"n": 1}, {"n": 2}], "b": [{"x": []}]}


def test_a_rank_failing_fails_the_group_instead_of_hanging():
    def work():
        if get_communicator().rank == 1:
            raise RuntimeError("rank 1 broke")
        get_communicator().barrier()

    with pytest.raises(RuntimeError, match="rank 1 broke"):
        ThreadGroup(2, timeout=10).run(work)


# ---------------------------------------------------------------------------------------------- sharding rules
@pytest.mark.parametrize("size,batch,world,drop_last", [(13, 4, 2, False), (12, 4, 2, False), (13, 4, 3, False),
                                                         (10, 3, 3, False), (13, 4, 2, True), (5, 5, 5, False),
                                                         (7, 2, 2, False)])
def test_every_sample_once_and_equal_steps(size, batch, world, drop_last):
    order = np.random.RandomState(size).permutation(size)
    batches = global_batches(order, batch, drop_last, world)
    parts = [[rank_part(b, world, rank) for b in batches] for rank in range(world)]
    used = np.concatenate([p for rank_parts in parts for p in rank_parts])
    expected = order[:size - size % batch] if drop_last else order
    assert sorted(used.tolist()) == sorted(expected.tolist())  # each sample once (all of them without drop_last)
    assert len({len(rank_parts) for rank_parts in parts}) == 1  # the same number of steps on every rank
    for step in range(len(batches)):
        sizes = [len(parts[rank][step]) for rank in range(world)]
        assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_remainder_smaller_than_world_merges_into_previous_step():
    assert [len(b) for b in global_batches(np.arange(13), 4, False, 2)] == [4, 4, 5]
    assert [len(b) for b in global_batches(np.arange(14), 4, False, 2)] == [4, 4, 4, 2]


def test_impossible_splits_are_errors():
    with pytest.raises(ValueError, match="batch_size 2 .* at least the number of processes"):
        global_batches(np.arange(10), 2, False, 3)
    with pytest.raises(ValueError, match="has 2 samples, fewer than the 3 processes"):
        global_batches(np.arange(2), 4, False, 3)


# ---------------------------------------------------------------------------------------------- the Pipeline
def _epoch(ops, steps_per_epoch=None, batch_size=4, size=11):
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(size, dtype=np.float32)[:, None]}),
                        batch_size=batch_size, ops=ops)
    with pipeline(mode="train", epoch=1, steps_per_epoch=steps_per_epoch) as loader:
        return len(loader), [batch["x"][:, 0].astype(int).tolist() for batch in loader]


@pytest.mark.parametrize("ops", [[], [Minmax(inputs="x", outputs="y")]], ids=["whole-batches", "per-sample"])
def test_pipeline_gives_each_rank_its_part_of_one_shared_order(ops):
    (len0, batches0), (len1, batches1) = ThreadGroup(2).run(_epoch, ops)
    assert len0 == len1 == len(batches0) == len(batches1) == 3  # 11 = 4 + 4 + 3
    assert sorted(sum(batches0, []) + sum(batches1, [])) == list(range(11))
    assert [len(b) for b in batches0] == [2, 2, 2] and [len(b) for b in batches1] == [2, 2, 1]


def test_pipeline_steps_per_epoch_are_global_steps():
    (len0, batches0), (len1, batches1) = ThreadGroup(2).run(_epoch, [], 5)
    assert len0 == len1 == len(batches0) == len(batches1) == 5
    assert all(len(b) == 2 for b in batches0 + batches1)
    first_pass = sum(batches0[:2], []) + sum(batches1[:2], [])  # 8 of the first permutation, no repeats
    assert len(set(first_pass)) == 8


def test_pipeline_refuses_a_batch_smaller_than_the_world():
    with pytest.raises(ValueError, match="global batch size"):
        ThreadGroup(3).run(_epoch, [], None, 2)


# ---------------------------------------------------------------------------------------------- metrics
def _metric_value(trace, batches, ranks=None):
    """Run `trace` over `batches` (each rank takes every world-th batch); the logged value on each rank."""
    def work():
        comm = get_communicator()
        mine = batches[comm.rank::comm.world_size]
        return run_epoch(trace(), mine).read_logs()

    if ranks is None:
        return run_epoch(trace(), batches).read_logs()
    return ThreadGroup(ranks).run(work)


def _random_batches(rng, sizes, classes=3):
    return [{"y": rng.randint(0, classes, size=n), "y_pred": rng.dirichlet(np.ones(classes), size=n)} for n in sizes]


@pytest.mark.parametrize("make", [lambda: Accuracy("y", "y_pred"),
                                  lambda: AUCScore("y", "y_pred", multi_class="ovr"),
                                  lambda: Dice("y", "y_pred", threshold=0.5)],
                         ids=["accuracy-confusion", "auc-concat", "dice-sums"])
def test_metrics_over_ranks_equal_one_process(make):
    rng = np.random.RandomState(0)
    if "Dice" in type(make()).__name__:
        batches = [{"y": rng.randint(0, 2, size=(n, 4, 4, 2)), "y_pred": rng.uniform(size=(n, 4, 4, 2))}
                   for n in (3, 2, 3, 1, 2)]
    else:
        batches = _random_batches(rng, (3, 2, 3, 1, 2))
    single = _metric_value(make, batches)
    for logs in _metric_value(make, batches, ranks=2) + _metric_value(make, batches, ranks=3):
        assert logs.keys() == single.keys()
        for key, value in single.items():
            np.testing.assert_allclose(np.asarray(logs[key], dtype=float), np.asarray(value, dtype=float),
                                       rtol=1e-12)


def test_per_ds_metrics_over_ranks_equal_one_process():
    rng = np.random.RandomState(1)
    per_ds = {"a": _random_batches(rng, (2, 3, 1, 2)), "b": _random_batches(rng, (4, 1))}
    single = run_epoch(Accuracy("y", "y_pred"), per_ds=per_ds).read_logs()

    def work():
        comm = get_communicator()
        mine = {ds: batches[comm.rank::2] for ds, batches in per_ds.items()}
        return run_epoch(Accuracy("y", "y_pred"), per_ds=mine).read_logs()

    for logs in ThreadGroup(2).run(work):
        assert logs == single


def test_eval_losses_over_unmatched_batches_are_means_over_samples_not_over_ranks():
    # rank 0: batches of 3 and 1 samples with mean losses 1.0 and 5.0; rank 1: one batch of 4 with mean 2.0. Ranks that
    # ran different numbers of batches (a framework loader iterated as it is) cannot be matched batch by batch: the
    # logged value is the mean over every sample (issue 45 covers matched batches: the mean of the global batches')
    def work():
        rank = get_communicator().rank
        trace = EvalEssential(monitor_names="ce")
        system = make_system(trace, mode="eval")
        trace.on_epoch_begin(Data())
        for samples, loss in ([(3, 1.0), (1, 5.0)] if rank == 0 else [(4, 2.0)]):
            system.batch_samples = samples
            trace.on_batch_end(Data({"ce": np.float32(loss)}))
        end = Data()
        trace.on_epoch_end(end)
        return end.read_logs()["ce"]

    means = ThreadGroup(2).run(work)
    assert [float(mean) for mean in means] == [pytest.approx((3 * 1 + 5 + 4 * 2) / 8)] * 2
    # a numpy scalar of the losses' own type, as one process's mean is: BestModelSaver and EarlyStopping keep it as
    # their best value, which a checkpoint must store as a number (a 0-d array was refused on resume)
    assert all(type(mean) is np.float32 for mean in means), [type(mean) for mean in means]


def test_a_stop_asked_by_one_rank_stops_every_rank_together():
    from types import SimpleNamespace

    def work():
        holder = SimpleNamespace(system=SimpleNamespace(stop_training=get_communicator().rank == 1))
        return Estimator._stop_agreed(holder), holder.system.stop_training  # pylint: disable=protected-access

    assert ThreadGroup(3).run(work) == [(True, True)] * 3
    assert Estimator._stop_agreed(SimpleNamespace(system=SimpleNamespace(stop_training=False))) is False
