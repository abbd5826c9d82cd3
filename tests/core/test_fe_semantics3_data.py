"""FastEstimator semantics, part 3 (issue 36): datasets' keys, stratified split counts, CombinedDataset errors,
nested dataset state and which datasets a checkpoint restores (numpy only)."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset


def labelled(counts):
    y = np.concatenate([np.full(count, label) for label, count in enumerate(counts)])
    return NumpyDataset({"x": np.arange(len(y)), "y": y})


# ---------------------------------------------------------------------------------------------- stratified splits
@pytest.mark.parametrize("counts, fraction, expected", [
    ([13, 2], 0.3, [4, 1]),           # 15 * 0.3 = 4.5 -> 5 taken (FastEstimator rounds a fraction up): 5 / 10
    ([95, 5], 0.1, [9, 1]),           # 9.5 -> 10 and 0.5 -> 1 ask for 11: the largest class gives one back
    ([97, 2, 1], 0.05, [3, 1, 1]),    # every class keeps at least one sample; the largest gives back two
    ([50, 50], 0.25, [13, 12]),       # 12.5 rounds half to even: the first class takes the missing one
    ([8, 1, 1], 0.5, [3, 1, 1]),
])
def test_stratified_split_of_imbalanced_data_takes_fastestimators_counts(counts, fraction, expected):
    ds = labelled(counts)
    part = ds.split(fraction, seed=3, stratify="y")
    assert np.bincount(np.asarray(part["y"]), minlength=len(counts)).tolist() == expected
    assert len(part) + len(ds) == sum(counts)
    assert sorted(np.concatenate([part["x"], ds["x"]]).tolist()) == list(range(sum(counts)))


def test_stratified_split_into_several_parts_shares_what_is_left():
    ds = labelled([13, 2])
    first, second = ds.split(5, 5, seed=0, stratify="y")
    assert np.bincount(first["y"], minlength=2).tolist() == [4, 1]
    assert np.bincount(second["y"], minlength=2).tolist() == [4, 1]
    assert np.bincount(ds["y"], minlength=2).tolist() == [5, 0]


def test_a_fraction_counts_its_samples_rounded_up_as_fastestimator_does():
    ds = NumpyDataset({"x": np.arange(15)})
    assert len(ds.split(0.3)) == 5 and len(ds) == 10
    ds = NumpyDataset({"x": np.arange(1000)})
    assert len(ds.split(0.1)) == 100 and len(ds) == 900
