"""NumpyDataset: map-style access, whole-batch fetching, validation and split."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset


def make_dataset(n: int = 6) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(n * 4).reshape(n, 2, 2), "y": list(range(n))})


def test_len_and_getitem_return_one_sample_per_key():
    ds = make_dataset()
    assert len(ds) == 6
    sample = ds[2]
    assert set(sample) == {"x", "y"}
    np.testing.assert_array_equal(sample["x"], [[8, 9], [10, 11]])
    assert sample["y"] == 2


def test_getitem_returns_a_new_dict_each_time():
    ds = make_dataset()
    first = ds[0]
    first["z"] = 1
    assert "z" not in ds[0]


def test_get_batch_gathers_many_samples_in_the_requested_order():
    ds = make_dataset()
    batch = ds.get_batch(np.array([4, 1, 1]))
    assert batch["x"].shape == (3, 2, 2)
    np.testing.assert_array_equal(batch["y"], [4, 1, 1])
    np.testing.assert_array_equal(batch["x"][0], ds[4]["x"])


def test_get_batch_can_select_keys_and_returns_writable_copies():
    ds = make_dataset()
    batch = ds.get_batch(np.array([0, 1]), keys=["y", "missing"])
    assert list(batch) == ["y"]
    batch["y"][0] = 99
    assert ds[0]["y"] == 0


def test_samples_are_read_only_views_so_in_place_edits_cannot_corrupt_the_dataset():
    original = np.zeros((3, 2))
    ds = NumpyDataset({"x": original})
    with pytest.raises(ValueError, match="read-only"):
        ds[0]["x"][0] = 5.0
    assert original.flags.writeable  # the caller's array is left alone


def test_mismatched_lengths_name_the_key():
    with pytest.raises(ValueError, match="key 'y' has 3 samples but key 'x' has 2"):
        NumpyDataset({"x": np.zeros((2, 4)), "y": [1, 2, 3]})


@pytest.mark.parametrize("data, message", [({}, "non-empty dict"), ({"x": 5}, "scalar"), ({1: [1]}, "strings")])
def test_invalid_data_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        NumpyDataset(data)


def test_ragged_lists_are_kept_as_object_arrays():
    ds = NumpyDataset({"seq": [[1, 2, 3], [4], []], "y": [0, 1, 2]})
    assert ds[0]["seq"] == [1, 2, 3]
    assert ds[2]["seq"] == []
    assert len(ds) == 3


def test_keys_lists_the_dataset_keys():
    assert make_dataset().keys() == ["x", "y"]


def test_split_moves_samples_into_new_datasets():
    ds = NumpyDataset({"x": np.arange(10)})
    held_out = ds.split(0.3, seed=1)
    assert len(ds) == 7 and len(held_out) == 3
    all_values = sorted(ds.get_batch(np.arange(7))["x"].tolist() + held_out.get_batch(np.arange(3))["x"].tolist())
    assert all_values == list(range(10))


def test_split_is_reproducible_with_a_seed_and_accepts_counts_and_indices():
    a, b = NumpyDataset({"x": np.arange(20)}), NumpyDataset({"x": np.arange(20)})
    assert a.split(5, seed=3).data["x"].tolist() == b.split(5, seed=3).data["x"].tolist()
    c = NumpyDataset({"x": np.arange(10)})
    first, second = c.split([0, 9], 2, seed=0)
    assert first.data["x"].tolist() == [0, 9]
    assert len(second) == 2 and len(c) == 6
    assert not set(second.data["x"].tolist()) & {0, 9}


def test_split_refuses_to_take_more_than_exists():
    with pytest.raises(ValueError, match="cannot take 20 samples"):
        NumpyDataset({"x": np.arange(10)}).split(20)
    with pytest.raises(ValueError, match=r"fractions must be in \(0, 1\)"):
        NumpyDataset({"x": np.arange(10)}).split(1.5)
