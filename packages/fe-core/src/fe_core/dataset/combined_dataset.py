"""`CombinedDataset`: several datasets with the same keys, one after the other."""
from __future__ import annotations

import bisect
from typing import Any, Dict, List, Sequence

import numpy as np

from fe_core.export import fe_export

__all__ = ["CombinedDataset"]


def _keys_of(dataset: Any) -> List[str]:
    keys = getattr(dataset, "keys", None)
    return list(keys()) if callable(keys) else list(dataset[0])


@fe_export("fe.dataset.combined_dataset.CombinedDataset", "fe.dataset.CombinedDataset")
class CombinedDataset:
    """Combines a list of datasets (FE datasets or any map-style datasets) into one, in order.

    Args:
        datasets: Datasets to be combined.

    Raises:
        AssertionError: If the input list has less than 2 datasets.
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
        reference = set(_keys_of(datasets[0]))
        for position, dataset in enumerate(datasets[1:], start=1):
            keys = set(_keys_of(dataset))
            if keys != reference:
                raise KeyError(f"CombinedDataset: dataset {position} has keys {sorted(keys)} but dataset 0 has "
                               f"{sorted(reference)}; all datasets must have the same keys")
        self.datasets = datasets
        self.cumulative_sizes = list(np.cumsum([len(dataset) for dataset in datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index: int) -> Dict[str, Any]:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"CombinedDataset index {index} out of range ({len(self)} samples)")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        offset = index - (self.cumulative_sizes[which - 1] if which else 0)
        return self.datasets[which][offset]

    def keys(self) -> List[str]:
        return _keys_of(self.datasets[0])

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
