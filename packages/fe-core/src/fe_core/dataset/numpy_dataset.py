"""`NumpyDataset`: an in-memory, map-style dataset of equally long arrays (one per key)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetIndexError, DatasetSummary, InMemoryDataset, \
    KeySummary, _summarize_values
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
class NumpyDataset(InMemoryDataset):
    """A dataset held in memory as arrays that share their first (sample) dimension.

    `dataset[i]` is a dict with one entry per key (read-only views into the arrays, so indexing is cheap and an op
    that edits a sample in place cannot corrupt the dataset). `get_batch(indices)` gathers many samples at once with
    numpy fancy indexing; the Pipeline uses it whenever no per-sample op has to run, which is what makes batch-capable
    NumpyOps fast.

    Args:
        data: Maps each key to its values: a numpy array or anything `np.asarray` accepts (lists of variable-length
            sequences are stored as object arrays). All values must have the same length.

    `dataset["y"]` returns the column as FastEstimator does: a list of the samples' values when each sample holds a
    scalar (so `.count()` and `==` work as on lists), a new array when each sample holds an array; `dataset["x"] =
    values` replaces or adds a column.
    `split(...)` (fractions, counts, index lists, `stratify=`) and `summary()` behave as in FastEstimator.

    Raises:
        ValueError: If `data` is empty, a key is not a string, or a value is a scalar.
        DatasetArgumentError: (a ValueError and AssertionError) If the lengths differ (the message names the key).

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
                raise DatasetArgumentError(f"NumpyDataset key {key!r} has {len(column)} samples but key {first_key!r} has "
                                 f"{size}; every key needs the same number of samples")
            self.data[key] = column
        self._size = size or 0
        self._items = list(self.data.items())

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: Union[int, str]) -> Any:
        """One sample as a new dict of read-only views (or scalars), or a whole column when `index` is a key.

        A column is a list of the samples' values when they are scalars (or objects), a new (writable) array when they
        are arrays, as FastEstimator's in-memory datasets return it.

        Raises:
            DatasetIndexError: (an IndexError and a KeyError, as FastEstimator raises) If `index` is out of range.
            KeyError: If `index` is a key the dataset does not have.
        """
        if isinstance(index, str):
            try:
                column = self.data[index]
            except KeyError:
                raise KeyError(f"NumpyDataset has no key {index!r} (keys: {self.keys()})") from None
            return np.array(column) if column.ndim > 1 and column.dtype != object else list(column)
        try:
            return {key: column[index] for key, column in self._items}
        except IndexError:
            raise DatasetIndexError(f"NumpyDataset index {index} out of range ({self._size} samples)") from None

    def __setitem__(self, key: Union[int, str], value: Any) -> None:
        """Set the column `key` (one value per sample), or overwrite sample `key` (an int) from a dict.

        Raises:
            ValueError: If a column's length differs from the dataset's, or a sample lacks a key.
        """
        if isinstance(key, str):
            column = _as_column(key, value)
            if len(column) != self._size:
                raise ValueError(f"NumpyDataset column {key!r} needs {self._size} values, got {len(column)}")
            self.data[key] = column
            self._items = list(self.data.items())
            return
        if not isinstance(value, dict) or set(value) != set(self.data):
            raise ValueError(f"NumpyDataset sample {key} must be a dict with keys {self.keys()}")
        for name, column in self._items:
            writable = column.copy()
            writable[key] = value[name]
            self.data[name] = _as_column(name, writable)
        self._items = list(self.data.items())

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

    def _class_values(self, key: str) -> List[Any]:
        if key not in self.data:
            raise DatasetArgumentError(f"NumpyDataset.split: stratify key {key!r} is not in the data "
                                       f"(keys: {self.keys()})")
        return list(self.data[key])

    def _do_split(self, splits: Sequence[np.ndarray]) -> List["NumpyDataset"]:
        new_sets = [NumpyDataset({key: column[picked] for key, column in self._items}) for picked in splits]
        keep = np.ones(self._size, dtype=bool)
        for picked in splits:
            keep[picked] = False
        keep_indices = np.flatnonzero(keep)
        self.data = {key: _as_column(key, column[keep_indices]) for key, column in self._items}
        self._items = list(self.data.items())
        self._size = len(keep_indices)
        return new_sets

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset (dtype, shape, unique values of scalar keys).

        Returns:
            A summary representation of this dataset.
        """
        keys: Dict[str, KeySummary] = {}
        for key, column in self._items:
            if column.dtype == object:
                keys[key] = _summarize_values(list(column))
                continue
            unique = int(len(np.unique(column))) if column.ndim == 1 else None
            keys[key] = KeySummary(dtype=str(column.dtype), num_unique_values=unique, shape=list(column.shape[1:]))
        return DatasetSummary(num_instances=self._size, keys=keys)

    # The arrays and their index are the script's input data, not training state: checkpoints never copy them.
    # Attributes a subclass adds are its state and are checkpointed like any object's.
    fe_configuration = ("data", "_items", "_size")

    def __repr__(self) -> str:
        shapes = ", ".join(f"{key}: {column.shape[1:]} {column.dtype}" for key, column in self._items)
        return f"NumpyDataset({self._size} samples; {shapes})"
