"""Pipeline layering in a data-parallel run, simulated in one process: this process plays one rank of two (every rank
seeds alike, so a broadcast gives back its own value), and its batches - its part of every global batch, uneven tails
and filtering included - are bitwise the same for num_process 0 and 2, for every dataset kind, also when the epoch is
resumed mid-way. (tests/torch/test_pipeline_workers_distributed.py runs real ranks under torchrun.)"""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

from fe_core.dataset import BatchDataset, CombinedDataset, ExtendDataset, InterleaveDataset, NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.distributed.communicator import Communicator, LocalCommunicator, set_communicator
from fe_core.op.numpyop import Batch, NumpyOp, RemoveIf
from fe_core.pipeline import Pipeline
from pipeline_layer_helpers import epochs, same


class Rank(LocalCommunicator):
    """Rank `rank` of `world` processes that all hold the same values (collectives give back this rank's)."""

    def __init__(self, world: int, rank: int) -> None:
        Communicator.__init__(self, world, rank, rank)  # pylint: disable=non-parent-init-called

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        return np.stack([array] * self.world_size)


class Jitter(NumpyOp):
    def forward(self, data, state):
        return np.float32(np.asarray(data, dtype=np.float32) + random.random() + np.random.rand())


def numbers(count: int, offset: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(offset, offset + count, dtype=np.float32), "y": np.arange(count) + offset})


def removed() -> RemoveIf:
    return RemoveIf(fn=lambda y: y % 5 == 0, inputs="y", replacement=False)


KINDS: Dict[str, Tuple[Callable[[], Any], Any, Callable[[], List[Any]]]] = {
    "NumpyDataset-uneven-tail-filtered": (lambda: numbers(23), 8, lambda: [removed(), Jitter(inputs="x", outputs="j")]),
    "random-batch-op": (lambda: numbers(23), None, lambda: [Jitter(inputs="x", outputs="j"), Batch(batch_size=4),
                                                            Jitter(inputs="x", outputs="x")]),
    "BatchDataset": (lambda: BatchDataset([numbers(20), numbers(12, 100)], num_samples=[3, 2]), None,
                     lambda: [Jitter(inputs="x", outputs="j")]),
    "ExtendDataset": (lambda: ExtendDataset(numbers(10), spoof_length=27), 4,
                      lambda: [Jitter(inputs="x", outputs="j")]),
    "CombinedDataset": (lambda: CombinedDataset([ExtendDataset(numbers(5), 9), numbers(7, 50)]), 4,
                        lambda: [Jitter(inputs="x", outputs="j")]),
    "InterleaveDataset": (lambda: InterleaveDataset([ExtendDataset(numbers(9), 20), numbers(16, 100)],
                                                    pattern=[0, 1, 1]), 4, lambda: [Jitter(inputs="x", outputs="j")]),
}


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")  # these tests' epochs are tiny on purpose


@pytest.fixture(params=[0, 1], ids=["rank0", "rank1"])
def rank(request):
    previous = set_communicator(Rank(2, request.param))
    yield request.param
    set_communicator(previous if previous.world_size > 1 else None)


def build(kind: str, num_process: int) -> Pipeline:
    make, batch_size, ops = KINDS[kind]
    return Pipeline(train_data=make(), batch_size=batch_size, ops=ops(), num_process=num_process)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_rank_gets_the_same_batches_for_any_num_process(kind, rank):
    results = {}
    for num_process in (0, 2):
        pipeline = build(kind, num_process)
        enable_deterministic(5)
        results[num_process] = epochs(pipeline)
    (expected, no_pids), (got, pids) = results[0], results[2]
    assert expected and not no_pids and len(pids) == 2
    assert same(expected, got)
    if kind.startswith("NumpyDataset"):  # this rank's parts: at most half of each global batch of 8, some smaller
        sizes = {len(batch["x"]) for batch in expected}
        assert max(sizes) == 4 and min(sizes) < 4


@pytest.mark.parametrize("kind", ["NumpyDataset-uneven-tail-filtered", "BatchDataset", "InterleaveDataset"])
def test_a_rank_resumed_mid_epoch_with_workers_continues_exactly(kind, rank):
    enable_deterministic(6)
    expected, _ = epochs(build(kind, 0))
    enable_deterministic(6)
    interrupted = build(kind, 2)
    with interrupted.workers():
        with interrupted(mode="train", epoch=1) as loader:
            iterator = iter(loader)
            seen = [{key: np.array(value) for key, value in next(iterator).items()} for _ in range(2)]
            checkpoint = interrupted.get_state()
            states = np.random.get_state(), random.getstate()
    np.random.seed(999)  # a fresh process: another random state
    resumed = build(kind, 2)
    resumed.set_state(checkpoint)
    np.random.set_state(states[0])
    random.setstate(states[1])
    rest, pids = epochs(resumed)
    assert len(pids) == 2 and same(seen + rest, expected)


@pytest.mark.parametrize("kind", ["NumpyDataset", "BatchDataset"])
def test_one_process_and_two_with_the_same_seed_see_the_same_global_batches(kind):
    """The epoch's order (and index maps) come from one generator seeded by one number from numpy's global state in
    one process as in several, so a global batch holds the same samples whatever the number of processes."""
    def ids(world: int, rank: int) -> List[List[int]]:
        previous = set_communicator(Rank(world, rank) if world > 1 else None)
        try:
            if kind == "BatchDataset":
                pipeline = Pipeline(train_data=BatchDataset([numbers(20), numbers(12, 100)], num_samples=[3, 3]))
            else:
                pipeline = Pipeline(train_data=numbers(22), batch_size=4)
            enable_deterministic(7)
            with pipeline(mode="train", epoch=1) as loader:
                return [sorted(int(value) for value in batch["y"]) for batch in loader]
        finally:
            set_communicator(previous if previous.world_size > 1 else None)

    single = ids(1, 0)
    first, second = ids(2, 0), ids(2, 1)
    assert single != sorted(single)  # shuffled
    assert [sorted(a + b) for a, b in zip(first, second)] == single


def test_an_extend_dataset_continues_its_passes_in_a_data_parallel_epoch_as_in_one_process():
    """Steps past an ExtendDataset's window read the rest of the wrapped data (its passes go on) in one process; each
    rank's parts of those global batches must be the same samples, not the window again."""
    def ids(world: int, rank: int) -> List[List[int]]:
        previous = set_communicator(Rank(world, rank) if world > 1 else None)
        try:
            pipeline = Pipeline(train_data=ExtendDataset(numbers(6), spoof_length=4), batch_size=2)
            with pipeline(mode="train", epoch=1, shuffle=False, steps_per_epoch=4) as loader:
                return [[int(value) for value in batch["y"]] for batch in loader]
        finally:
            set_communicator(previous if previous.world_size > 1 else None)

    single = ids(1, 0)
    assert single == [[0, 1], [2, 3], [4, 5], [0, 1]]
    assert [a + b for a, b in zip(ids(2, 0), ids(2, 1))] == single
