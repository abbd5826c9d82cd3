"""`CombinedDataset`: several datasets with the same keys, one after the other."""
from __future__ import annotations

import bisect
from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

from fe_core.dataset._nested_state import NestedDatasetStateMixin
from fe_core.dataset.dataset import _peek_first
from fe_core.export import fe_export

__all__ = ["CombinedDataset"]


class CombinedIndexError(IndexError, ValueError):
    """A negative index beyond the combined length: an IndexError, and the ValueError FastEstimator's CombinedDataset
    (a torch ConcatDataset) raises for it."""


_INVALID = "Each dataset should be a type of PyTorch Dataset and should return a dictionary."


def _keys_of(dataset: Any, position: int) -> List[str]:
    """The keys of a map-style dataset's samples (its `keys()`, else its first sample's, looked at with the random
    states put back).

    Raises:
        AssertionError: With FastEstimator's message, if `dataset` is not a map-style dataset of dict samples.
    """
    if isinstance(dataset, (str, bytes, Mapping)) or not (hasattr(dataset, "__getitem__") and
                                                            hasattr(dataset, "__len__")):
        raise AssertionError(_INVALID)
    keys = getattr(dataset, "keys", None)
    if callable(keys):
        found = list(keys())
        if found:
            return found
    sample = _peek_first(dataset)
    if not isinstance(sample, Mapping):
        raise AssertionError(_INVALID)
    return list(sample)


@fe_export("fe.dataset.combined_dataset.CombinedDataset", "fe.dataset.CombinedDataset")
class CombinedDataset(NestedDatasetStateMixin):
    """Combines a list of datasets (FE datasets or any map-style datasets) into one, in order.

    Args:
        datasets: Datasets to be combined.

    Raises:
        AssertionError: If the input list has less than 2 datasets, holds an InterleaveDataset, or a dataset whose
            samples are not dicts.
        KeyError: If the datasets do not have the same keys.

    Example:
        >>> from fe_core.dataset import NumpyDataset
        >>> ds = CombinedDataset([NumpyDataset({"x": np.arange(2)}), NumpyDataset({"x": np.arange(5, 8)})])
        >>> len(ds), int(ds[2]["x"])
        (5, 5)
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        datasets = list(datasets)
        if not datasets:  # FastEstimator's messages and error types, which its users' code and tests check
            raise AssertionError("datasets should not be an empty iterable")
        if len(datasets) < 2:
            raise AssertionError(f"CombinedDataset needs at least 2 datasets, got {len(datasets)}")
        reference = None
        for position, dataset in enumerate(datasets):
            if callable(getattr(dataset, "sub_ds_ids", None)):
                raise AssertionError("CombinedDataset does not support InterleaveDataset")
            keys = set(_keys_of(dataset, position))
            if reference is None:
                reference = keys
            elif keys != reference:
                raise KeyError("All datasets should have the same keys.")
        self.datasets = datasets
        self.cumulative_sizes = list(np.cumsum([len(dataset) for dataset in datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index: int) -> Dict[str, Any]:
        """Sample `index` of the datasets one after the other (negative indices count from the end).

        Raises:
            IndexError: If `index` >= len(self).
            CombinedIndexError: (an IndexError and a ValueError, as FastEstimator raises) If `index` < -len(self).
        """
        if index < 0:
            if -index > len(self):
                raise CombinedIndexError("absolute value of index should not exceed dataset length")
            index += len(self)
        if index >= len(self):
            raise IndexError("list index out of range")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        offset = index - (self.cumulative_sizes[which - 1] if which else 0)
        return self.datasets[which][offset]

    def keys(self) -> List[str]:
        return _keys_of(self.datasets[0], 0)

    def fe_reset_ds(self, shuffle: bool = True, *, seed: Any = None) -> None:
        """Forward the per-epoch reset to the datasets that have one."""
        for dataset in self.datasets:
            if hasattr(dataset, "fe_reset_ds"):
                dataset.fe_reset_ds(shuffle, seed=seed)

    def fe_member_datasets(self) -> List[Any]:
        """The datasets this one holds (their state is checkpointed with its own)."""
        return list(self.datasets)
