"""A user's dataset subclass keeps its own state in checkpoints (it was dropped: the base returned {}), while the
dataset's samples themselves are never copied into a checkpoint."""
from __future__ import annotations

import numpy as np

from fe_core.checkpoint.codec import StateCodec
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.dataset import NumpyDataset
from fe_core.dataset.dataset import InMemoryDataset


class CountingNumpy(NumpyDataset):
    def __init__(self, data):
        super().__init__(data)
        self.served = 0
        self.rng = np.random.default_rng(3)

    def __getitem__(self, index):
        self.served += 1
        return super().__getitem__(index)


class Tagged(InMemoryDataset):
    def __init__(self, data):
        super().__init__(data)
        self.epochs_seen = 0


def _round_trip(obj):
    codec = StateCodec()
    data, arrays = codec.encode(get_object_state(obj))
    return codec.decode(data, arrays)


def test_a_numpy_dataset_subclass_keeps_its_attributes_but_not_its_arrays():
    dataset = CountingNumpy({"x": np.arange(10.0), "y": np.arange(10)})
    for index in range(3):
        dataset[index]
    dataset.rng.random()
    saved = _round_trip(dataset)
    assert set(saved) == {"served", "rng"}  # no 'data', '_items', '_size': the arrays are the script's input
    fresh = CountingNumpy({"x": np.arange(10.0), "y": np.arange(10)})
    set_object_state(fresh, saved)
    assert fresh.served == 3 and fresh.rng.random() == dataset.rng.random()


def test_an_in_memory_dataset_subclass_keeps_its_attributes():
    dataset = Tagged({0: {"x": 1}, 1: {"x": 2}})
    dataset.epochs_seen = 4
    saved = _round_trip(dataset)
    assert saved == {"epochs_seen": 4}
    fresh = Tagged({0: {"x": 1}, 1: {"x": 2}})
    set_object_state(fresh, saved)
    assert fresh.epochs_seen == 4


def test_a_plain_numpy_dataset_saves_nothing():
    assert get_object_state(NumpyDataset({"x": np.zeros((4, 2))})) == {}
