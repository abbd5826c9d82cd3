"""`CombinedDataset`: several datasets with the same keys, one after the other."""
from __future__ import annotations

import bisect
from typing import Any, Dict, List, Sequence

import numpy as np

from fe_core.export import fe_export

__all__ = ["CombinedDataset"]


class CombinedIndexError(IndexError, ValueError):
    """A negative index beyond the combined length: an IndexError, and the ValueError FastEstimator's CombinedDataset
    (a torch ConcatDataset) raises for it."""


def _keys_of(dataset: Any, position: int) -> List[str]:
    keys = getattr(dataset, "keys", None)
    if callable(keys):
        return list(keys())
    sample = dataset[0]
    if not isinstance(sample, dict):
        raise AssertionError(f"CombinedDataset: dataset {position} ({type(dataset).__name__}) must return a dict per "
                             f"sample, got {type(sample).__name__}")
    return list(sample)


@fe_export("fe.dataset.combined_dataset.CombinedDataset", "fe.dataset.CombinedDataset")
class CombinedDataset:
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
        if len(datasets) < 2:
            raise AssertionError(f"CombinedDataset needs at least 2 datasets, got {len(datasets)}")
        for position, dataset in enumerate(datasets):
            if callable(getattr(dataset, "sub_ds_ids", None)):
                raise AssertionError(f"CombinedDataset does not support InterleaveDataset (dataset {position})")
        reference = set(_keys_of(datasets[0], 0))
        for position, dataset in enumerate(datasets[1:], start=1):
            keys = set(_keys_of(dataset, position))
            if keys != reference:
                raise KeyError(f"CombinedDataset: dataset {position} has keys {sorted(keys)} but dataset 0 has "
                               f"{sorted(reference)}; all datasets must have the same keys")
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
                raise CombinedIndexError(f"CombinedDataset index {index}: its absolute value exceeds the dataset "
                                         f"length {len(self)}")
            index += len(self)
        if index >= len(self):
            raise IndexError(f"CombinedDataset index {index} out of range ({len(self)} samples)")
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

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: none."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned."""
