"""Pipeline layering, workers for every dataset kind: datasets that draw per-epoch index maps (BatchDataset,
ExtendDataset, CombinedDataset, user datasets with `fe_reset_ds`) and SiameseDirDataset get worker processes, with
batches bitwise equal to num_process=0."""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

from fe_core.dataset import (BatchDataset, CombinedDataset, ExtendDataset, InterleaveDataset, NumpyDataset,
                             SiameseDirDataset)
from fe_core.determinism import enable_deterministic
from fe_core.op.numpyop import NumpyOp, RemoveIf
from fe_core.pipeline import Pipeline
from pipeline_layer_helpers import alive, epochs, interrupted_and_resumed, same


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")  # these tests' epochs are tiny on purpose


class Jitter(NumpyOp):
    """Per-sample randomness from numpy's and Python's global random states, as user ops draw."""

    def forward(self, data, state):
        return np.asarray(data, dtype=np.float32) + np.float32(random.random() + np.random.rand())


def numbers(count: int, offset: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(offset, offset + count, dtype=np.float32), "y": np.arange(count) + offset})


class Remapped:
    """A user dataset with `fe_reset_ds`: a fresh random index map each epoch, drawn from numpy's global state."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.map = np.arange(count)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Dict[str, Any]:
        return {"x": np.float32(self.map[index]), "y": int(self.map[index])}

    def fe_reset_ds(self, shuffle: bool = True) -> None:
        self.map = np.random.randint(0, 1000, self.count)


def siamese(tmp_path) -> SiameseDirDataset:
    for label in ("a", "b", "c"):
        folder = tmp_path / label
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(6):
            (folder / f"{index}.txt").write_text(label)
    return SiameseDirDataset(str(tmp_path))


KINDS: Dict[str, Tuple[Callable[[Any], Any], int, List[Any]]] = {
    "BatchDataset": (lambda tmp: BatchDataset([numbers(20), numbers(12, 100)], num_samples=[3, 2]), None, []),
    "BatchDataset-probability": (lambda tmp: BatchDataset([numbers(20), numbers(12, 100)], num_samples=4,
                                                          probability=[0.7, 0.3]), None, []),
    "ExtendDataset": (lambda tmp: ExtendDataset(numbers(10), spoof_length=27), 4, []),
    "CombinedDataset": (lambda tmp: CombinedDataset([ExtendDataset(numbers(5), 9), numbers(7, 50)]), 4, []),
    "user-fe_reset_ds": (lambda tmp: Remapped(22), 4, [RemoveIf(fn=lambda y: y % 7 == 0, inputs="y", replacement=True)]),
    "SiameseDirDataset": (siamese, 4, []),
    "InterleaveDataset": (lambda tmp: InterleaveDataset([ExtendDataset(numbers(9), 20), numbers(16, 100)],
                                                        pattern=[0, 1, 1]), 4, []),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_dataset_kind_runs_in_workers_with_the_in_process_batches(kind, tmp_path):
    make, batch_size, extra = KINDS[kind]
    results = {}
    for num_process in (0, 2):
        dataset = make(tmp_path / "data")
        jitter = Jitter(inputs="y" if kind == "SiameseDirDataset" else "x", outputs="j")
        pipeline = Pipeline(train_data=dataset, batch_size=batch_size, ops=list(extra) + [jitter],
                            num_process=num_process)
        enable_deterministic(7)
        results[num_process] = epochs(pipeline)
    (expected, no_pids), (got, pids) = results[0], results[2]
    assert expected and not no_pids and len(pids) == 2  # the workers computed the epochs
    assert same(expected, got)
    first, second = expected[:len(expected) // 2], expected[len(expected) // 2:]
    assert not same(first, second)  # index maps and randomness differ between epochs


def test_a_generator_dataset_runs_ahead_in_one_worker_process_in_its_own_order():
    import os
    from fe_core.dataset import GeneratorDataset

    def counting():
        count = 0
        while True:
            yield {"x": np.float32(count), "pid": os.getpid()}
            count += 1

    pipeline = Pipeline(train_data=GeneratorDataset(counting(), samples_per_epoch=30), batch_size=8,
                        ops=[Jitter(inputs="x", outputs="j")], num_process=2)
    batches, _ = epochs(pipeline)
    xs = np.concatenate([batch["x"] for batch in batches])
    pids = set(np.concatenate([batch["pid"] for batch in batches]).tolist())
    assert len(batches) == 8 and xs.tolist() == list(range(1, 61))  # one order, continued into epoch 2 (0: keys())
    assert len(pids) == 1 and os.getpid() not in pids  # drawn in one process, not the trainer
    feed_pid = pids.pop()
    assert not alive(feed_pid)  # stopped with the workers() block


def _random_draws():
    """A generator drawing from numpy's and Python's global random states (and saying which process drew)."""
    import os
    while True:
        yield {"x": np.random.rand(3).astype(np.float32), "r": np.float32(random.random()), "pid": os.getpid()}


def _random_generator_pipeline(num_process: int) -> Pipeline:
    from fe_core.dataset import GeneratorDataset
    return Pipeline(train_data=GeneratorDataset(_random_draws(), samples_per_epoch=20), batch_size=4,
                    ops=[Jitter(inputs="x", outputs="j")], num_process=num_process)


def _without_pids(batches: List[Dict[str, np.ndarray]]) -> Tuple[List[Dict[str, np.ndarray]], set]:
    return ([{key: value for key, value in batch.items() if key != "pid"} for batch in batches],
            set(np.concatenate([batch["pid"] for batch in batches]).tolist()))


def test_a_random_generator_dataset_gives_the_same_batches_with_its_feed_process_and_on_resume():
    """The feed process seeds each draw of the generator by its stream position, as the trainer does: the batches of
    num_process=0 and 2 are bitwise equal over two epochs, and a run resumed mid-epoch repeats them."""
    import os
    results = {}
    for num_process in (0, 2):
        enable_deterministic(5)
        results[num_process] = _without_pids(epochs(_random_generator_pipeline(num_process))[0])
    (expected, trainer), (got, fed) = results[0], results[2]
    assert trainer == {os.getpid()} and len(fed) == 1 and os.getpid() not in fed  # drawn in the feed process
    assert len(expected) == 10 and same(expected, got)
    assert not same(expected[:5], expected[5:])  # the epochs draw different samples

    enable_deterministic(5)
    seen, resumed = interrupted_and_resumed(_random_generator_pipeline)
    rest, _ = epochs(resumed)
    (seen, _), (rest, fed) = _without_pids(seen), _without_pids(rest)
    assert os.getpid() not in fed and same(seen + rest, expected)


def test_a_random_generator_dataset_read_twice_at_once_or_left_early_gives_the_same_batches_with_workers():
    """Two iterations open at once (zip) each get the samples of their own positions from the feed process, and the
    samples an epoch left early had asked for never reach the next epoch."""
    def run(num_process: int) -> List[Dict[str, np.ndarray]]:
        pipeline = _random_generator_pipeline(num_process)
        enable_deterministic(6)
        batches = []
        with pipeline.workers():
            with pipeline(mode="train", epoch=1) as loader:
                for first, second in zip(loader, loader):
                    batches += [first, second]
                batches.append(next(iter(loader)))  # one batch, the rest of the epoch left
            with pipeline(mode="train", epoch=2) as loader:
                batches += list(loader)
        return _without_pids([{key: np.array(value) for key, value in batch.items()} for batch in batches])[0]

    expected = run(0)
    assert len(expected) == 16 and same(run(2), expected)


@pytest.mark.parametrize("kind", ["BatchDataset", "ExtendDataset"])
def test_resume_mid_epoch_with_workers_redraws_the_same_index_maps(kind, tmp_path):
    make, batch_size, extra = KINDS[kind]

    def build(num_process):
        return Pipeline(train_data=make(tmp_path), batch_size=batch_size, ops=[Jitter(inputs="x", outputs="j")],
                        num_process=num_process)

    enable_deterministic(4)
    expected, _ = epochs(build(0))
    enable_deterministic(4)
    seen, resumed = interrupted_and_resumed(build)
    rest, pids = epochs(resumed)
    assert len(pids) == 2 and same(seen + rest, expected)


class ReshuffledInPlace:
    """A user dataset whose fe_reset_ds builds on its previous map (an in-place reshuffle)."""

    def __init__(self, count: int) -> None:
        self.count, self.map = count, np.arange(count)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Dict[str, Any]:
        return {"x": np.float32(self.map[index])}

    def fe_reset_ds(self, shuffle: bool = True) -> None:
        np.random.shuffle(self.map)


def test_an_fe_reset_ds_that_reshuffles_its_previous_map_gives_the_same_batches_in_workers():
    results = {}
    for num_process in (0, 2):
        pipeline = Pipeline(train_data=ReshuffledInPlace(40), batch_size=8, ops=[Jitter(inputs="x", outputs="j")],
                            num_process=num_process)
        enable_deterministic(2)
        results[num_process] = epochs(pipeline, count=3)
    (expected, _), (got, pids) = results[0], results[2]
    assert len(pids) == 2 and len(expected) == 15 and same(expected, got)
