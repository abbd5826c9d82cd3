"""`NumpyDataset`: an in-memory, map-style dataset of equally long arrays (one per key)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np
from fe_core.export import fe_export

__all__ = ["NumpyDataset"]


def _as_column(key: str, values: Any) -> np.ndarray:
    """Turn one column of data into a read-only array whose first axis indexes the samples."""
    if isinstance(values, np.ndarray):
        column = values.view()
    else:
        try:
            column = np.asarray(values)
        except ValueError:  # ragged lists (variable-length sequences) become object arrays
            column = None
        if column is None or (column.dtype == object and column.ndim > 1):
            items = list(values)
            column = np.empty(len(items), dtype=object)
            for index, item in enumerate(items):
                column[index] = item
    if column.ndim == 0:
        raise ValueError(f"NumpyDataset key {key!r} holds a scalar ({values!r}); every key needs one value per sample")
    column.flags.writeable = False  # ops that edit samples in place get copies instead of corrupting the dataset
    return column


@fe_export("fe.dataset.numpy_dataset.NumpyDataset", "fe.dataset.NumpyDataset")
class NumpyDataset:
    """A dataset held in memory as arrays that share their first (sample) dimension.

    `dataset[i]` is a dict with one entry per key (read-only views into the arrays, so indexing is cheap and an op
    that edits a sample in place cannot corrupt the dataset). `get_batch(indices)` gathers many samples at once with
    numpy fancy indexing; the Pipeline uses it whenever no per-sample op has to run, which is what makes batch-capable
    NumpyOps fast.

    Args:
        data: Maps each key to its values: a numpy array or anything `np.asarray` accepts (lists of variable-length
            sequences are stored as object arrays). All values must have the same length.

    Raises:
        ValueError: If `data` is empty, a key is not a string, or the lengths differ (the message names the key).

    Example:
        >>> ds = NumpyDataset({"x": np.zeros((4, 2)), "y": [0, 1, 0, 1]})
        >>> len(ds), ds[1]["y"], ds.get_batch(np.array([3, 0]))["y"].tolist()
        (4, np.int64(1), [1, 0])
    """

    def __init__(self, data: Dict[str, Any]) -> None:
        if not isinstance(data, dict) or not data:
            raise ValueError(f"NumpyDataset needs a non-empty dict of key -> array, got {type(data).__name__}")
        self.data: Dict[str, np.ndarray] = {}
        size: Optional[int] = None
        first_key = ""
        for key, values in data.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"NumpyDataset keys must be non-empty strings, got {key!r}")
            column = _as_column(key, values)
            if size is None:
                size, first_key = len(column), key
            elif len(column) != size:
                raise ValueError(f"NumpyDataset key {key!r} has {len(column)} samples but key {first_key!r} has "
                                 f"{size}; every key needs the same number of samples")
            self.data[key] = column
        self._size = size or 0
        self._items = list(self.data.items())

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int) -> Dict[str, Any]:
        """One sample as a new dict of read-only views (or scalars).

        Raises:
            IndexError: If `index` is out of range.
        """
        return {key: column[index] for key, column in self._items}

    def get_batch(self, indices: Union[Sequence[int], np.ndarray], keys: Optional[Iterable[str]] = None
                  ) -> Dict[str, np.ndarray]:
        """Many samples at once, each key gathered with one fancy-indexing call (the arrays are fresh copies).

        Args:
            indices: The sample indices, in the order wanted.
            keys: Only gather these keys (default: all). Keys the dataset lacks are skipped.

        Returns:
            A dict of arrays whose first axis has `len(indices)` entries.
        """
        if keys is None:
            return {key: column[indices] for key, column in self._items}
        data = self.data
        return {key: data[key][indices] for key in keys if key in data}

    def keys(self) -> List[str]:
        """The dataset's keys, in insertion order."""
        return list(self.data)

    def split(self, *fractions: Union[float, int, Iterable[int]], seed: Optional[int] = None
              ) -> Union["NumpyDataset", List["NumpyDataset"]]:
        """Move part of the data into new dataset(s), as FastEstimator's `dataset.split(...)` does.

        Args:
            *fractions: For each new dataset: a float in (0, 1) takes that fraction of the current data, an int takes
                that many samples, and an iterable of ints takes exactly those indices.
            seed: Seed for choosing the samples at random (default: numpy's global random state).

        Returns:
            One dataset when one fraction is given, else a list. The chosen samples are removed from this dataset.

        Raises:
            ValueError: If the requested splits need more samples than exist or a fraction is out of range.

        Example:
            >>> ds = NumpyDataset({"x": np.arange(10)})
            >>> held_out = ds.split(0.2, seed=0)
            >>> len(ds), len(held_out)
            (8, 2)
        """
        if not fractions:
            raise ValueError("NumpyDataset.split needs at least one fraction, count or list of indices")
        rng = np.random.RandomState(seed) if seed is not None else np.random
        size = len(self)
        available = np.ones(size, dtype=bool)
        chosen: List[np.ndarray] = []
        for fraction in fractions:
            if isinstance(fraction, float):
                if not 0 < fraction < 1:
                    raise ValueError(f"NumpyDataset.split fractions must be in (0, 1), got {fraction}")
                count = int(round(size * fraction))
            elif isinstance(fraction, (int, np.integer)) and not isinstance(fraction, bool):
                count = int(fraction)
            else:
                explicit = np.asarray(list(fraction), dtype=np.int64)
                if explicit.size and (explicit.min() < 0 or explicit.max() >= size or not available[explicit].all()):
                    raise ValueError(f"NumpyDataset.split indices must be distinct, unused and in [0, {size})")
                available[explicit] = False
                chosen.append(explicit)
                continue
            free = np.flatnonzero(available)
            if count < 1 or count > len(free):
                raise ValueError(f"NumpyDataset.split cannot take {count} samples: {len(free)} are left to split")
            picked = np.sort(rng.choice(free, size=count, replace=False))
            available[picked] = False
            chosen.append(picked)
        new_sets = [NumpyDataset({key: column[picked] for key, column in self._items}) for picked in chosen]
        keep = np.flatnonzero(available)
        self.data = {key: _as_column(key, column[keep]) for key, column in self._items}
        self._items = list(self.data.items())
        self._size = len(keep)
        return new_sets[0] if len(new_sets) == 1 else new_sets

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: none. The arrays are the script's input data, not training state, so checkpoints
        never copy them."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned (nothing)."""

    def __repr__(self) -> str:
        shapes = ", ".join(f"{key}: {column.shape[1:]} {column.dtype}" for key, column in self._items)
        return f"NumpyDataset({self._size} samples; {shapes})"
