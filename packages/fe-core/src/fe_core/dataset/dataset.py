"""The dataset base classes: `FEDataset` (split, summary), `InMemoryDataset`, and the summary records.

A dataset is a map-style object: `len(ds)` samples, `ds[i]` a dict of the sample's values. `FEDataset` adds
FastEstimator's `split(...)` (by fractions, counts or index lists, optionally stratified by a class key) and
`summary()`. `InMemoryDataset` holds `{index: {key: value}}` in memory and adds column access (`ds["x"]`).

Checkpoints: datasets are the script's input, not training state, so `get_state()` is empty unless a subclass keeps
state that changes while training (see BatchDataset). Everything random (split without a seed, per-epoch
re-shuffles) draws from numpy's global random state, which the Pipeline records for exact resume.
"""
from __future__ import annotations

import copy
import math
import random
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.distributed.launch import unseeded_random_state
from fe_core.export import fe_export

__all__ = ["FEDataset", "InMemoryDataset", "DatasetSummary", "KeySummary", "DatasetArgumentError", "DatasetIndexError",
           "Fraction"]

Fraction = Union[float, int, Iterable[int]]


class DatasetArgumentError(ValueError, AssertionError):
    """Invalid dataset arguments. A ValueError, and an AssertionError as FastEstimator raises for the same cases."""


class DatasetIndexError(IndexError, KeyError):
    """A sample index out of range. An IndexError, and a KeyError as FastEstimator's in-memory datasets (which look
    samples up in a dict) raise for the same case."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@fe_export("fe.dataset.dataset.KeySummary")
class KeySummary:
    """A summary of the dataset attributes corresponding to a particular key.

    Args:
        dtype: The data type of instances corresponding to the given key.
        num_unique_values: The number of unique values corresponding to a particular key (if known).
        shape: The shape of the vectors corresponding to the key. None is used in a list to indicate that a dimension
            is ragged.
    """

    def __init__(self, dtype: str, num_unique_values: Optional[int] = None, shape: Sequence[Optional[int]] = ()) -> None:
        self.num_unique_values = num_unique_values
        self.shape = list(shape)
        self.dtype = dtype

    def _to_dict(self) -> Dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}

    def __repr__(self) -> str:
        return f"<KeySummary {self._to_dict()}>"


@fe_export("fe.dataset.dataset.DatasetSummary")
class DatasetSummary:
    """This class contains information summarizing a dataset object.

    Args:
        num_instances: The number of data instances within the dataset (influences the size of an epoch).
        keys: What keys does the dataset provide, along with summary information about each key.
        num_classes: How many different classes are present.
        class_key_mapping: A mapping of the original class string values to the values which are output to the
            pipeline.
        class_key: Which key corresponds to class information (if known).
    """

    def __init__(self,
                 num_instances: int,
                 keys: Dict[str, KeySummary],
                 num_classes: Optional[int] = None,
                 class_key_mapping: Optional[Dict[str, Any]] = None,
                 class_key: Optional[str] = None) -> None:
        self.num_instances = num_instances
        self.class_key = class_key
        self.num_classes = num_classes
        self.class_key_mapping = class_key_mapping
        self.keys = keys

    def _to_dict(self) -> Dict[str, Any]:
        result = {}
        for name, value in self.__dict__.items():
            if value is None:
                continue
            if name == "keys":
                value = {key: summary._to_dict() for key, summary in value.items()}
            result[name] = value
        return result

    def __repr__(self) -> str:
        return f"<DatasetSummary {self._to_dict()}>"

    def __str__(self) -> str:
        lines = [f"{name}: {value}" for name, value in self._to_dict().items()]
        return "\n".join(lines)


def _summarize_values(values: Sequence[Any]) -> KeySummary:
    """Summarize one key from all of its values (dtype, shape with None for ragged axes, unique count of scalars)."""
    first = values[0]
    if isinstance(first, np.ndarray):
        dtype = str(first.dtype)
        shapes = {value.shape if isinstance(value, np.ndarray) else np.shape(value) for value in values}
        if len(shapes) == 1:
            shape: List[Optional[int]] = list(first.shape)
        else:
            ranks = {len(s) for s in shapes}
            if len(ranks) != 1:
                shape = [None]
            else:
                shape = [dims[0] if len(set(dims)) == 1 else None for dims in zip(*shapes)]
        return KeySummary(dtype=dtype, shape=shape)
    if isinstance(first, (str, bytes, bool, int, float, np.generic)):
        dtype = type(first).__name__ if not isinstance(first, np.generic) else str(first.dtype)
        try:
            unique = len(set(values))
        except TypeError:
            unique = None
        return KeySummary(dtype=dtype, num_unique_values=unique)
    if isinstance(first, (list, tuple)):
        lengths = {len(value) if isinstance(value, (list, tuple)) else -1 for value in values}
        return KeySummary(dtype=type(first).__name__, shape=[lengths.pop() if len(lengths) == 1 else None])
    return KeySummary(dtype=type(first).__name__)


def _class_indices(values: Sequence[Any], name: str, key: str) -> Tuple[np.ndarray, List[int]]:
    """(class number of every sample, class numbers in order of first appearance) for stratified splits."""
    numbers: Dict[Any, int] = {}
    class_of = np.empty(len(values), dtype=np.int64)
    for index, value in enumerate(values):
        if isinstance(value, np.ndarray):
            value = value.item() if value.size == 1 else (value.dtype.str, value.shape, value.tobytes())
        elif isinstance(value, np.generic):
            value = value.item()
        try:
            class_of[index] = numbers.setdefault(value, len(numbers))
        except TypeError as error:
            raise DatasetArgumentError(f"{name}.split: stratify key {key!r} must hold scalar class values") from error
    return class_of, list(range(len(numbers)))


def stratified_counts(totals: Sequence[int], size: int, target: int, supply: List[int]) -> List[int]:
    """How many samples of each class one stratified split of `target` samples takes (FastEstimator's counts).

    Each class asks for its share of `target` (`totals[c] * target / size`), rounded half to even, and at least 1 when
    its share is below 1; then the split is brought to exactly `target` one sample at a time, starting with the
    classes holding the most, never emptying a class that holds one unless nothing else works. `supply` (what each
    class still has left) is reduced by what is taken.

    Raises:
        DatasetArgumentError: If `target` samples cannot be taken from what is left.

    Example:
        >>> stratified_counts([13, 2], 15, 5, [13, 2])
        [4, 1]
    """
    taken = [0] * len(totals)
    for label, total in enumerate(totals):
        share = total * target / size
        want = 1 if 0 < share < 1 else int(round(share))
        taken[label] = min(want, supply[label])
        supply[label] -= taken[label]
    count = sum(taken)
    spare_singles = True
    while count != target:
        before = count
        snapshot = list(taken)
        for label in sorted(range(len(taken)), key=lambda c: snapshot[c], reverse=True):  # most abundant first
            if count < target and supply[label] > 0:
                supply[label] -= 1
                taken[label] += 1
                count += 1
            elif count > target and taken[label] > 0 and (not spare_singles or snapshot[label] > 1):
                supply[label] += 1
                taken[label] -= 1
                count -= 1
            if count == target:
                break
        if count == before:
            if not spare_singles:
                raise DatasetArgumentError(f"split cannot take {target} samples stratified from what is left")
            spare_singles = False  # nothing moved: a class of one sample must give it up
    return taken


def _peek_first(dataset: Any) -> Any:
    """`dataset[0]`, leaving numpy's and python's global random states as they were."""
    numpy_state, python_state = np.random.get_state(), random.getstate()
    try:
        return dataset[0]
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)


@fe_export("fe.dataset.dataset.FEDataset")
class FEDataset:
    """A map-style dataset with FastEstimator's `split` and `summary`.

    Subclasses implement `__len__`, `__getitem__` and `_do_split(splits)`, which moves the given index arrays into new
    datasets of their own kind and removes them from `self`.
    """

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Dict[str, Any]:
        raise NotImplementedError

    # ------------------------------------------------------------------ split
    @classmethod
    def fix_split_traceabilty(cls, parent: "FEDataset", children: List["FEDataset"],
                              fractions: Tuple[Fraction, ...], seed: Optional[int], stratify: Optional[str]) -> None:
        """A hook FastEstimator uses to fix traceability information after `split()`; fe keeps none, so it does
        nothing (kept so subclasses that call it keep working)."""

    def split(self, *fractions: Fraction, seed: Optional[int] = None,
              stratify: Optional[str] = None) -> Union["FEDataset", List["FEDataset"]]:
        """Split this dataset into multiple smaller datasets.

        This function enables several types of splitting:
        1. By fractions: `ds.split(0.1)` moves 10% of the data into a new dataset; `ds.split(0.1, 0.2)` makes two.
        2. By counts: `ds.split(100)`, `ds.split(90, 180)`.
        3. By indices: `ds.split([87, 2, 3])`, `ds.split(range(100))`.

        Args:
            *fractions: Floating point values will be interpreted as percentages, integers as an absolute number of
                datapoints, and an iterable of integers as the exact indices of the data that should be removed in
                order to create the new dataset.
            seed: The random seed to use when splitting the dataset (default: numpy's global random state; in a
                data-parallel launch, a random stream shared by all its processes, so every process splits alike).
            stratify: A class key within the dataset with which to stratify the split (to approximately maintain class
                balance ratios before and after a split). Incompatible with data index splitting.

        Returns:
            One or more new datasets which are created by removing elements from the current dataset. A single
            fraction returns a single dataset, several return a list.

        Raises:
            DatasetArgumentError: (a ValueError and AssertionError) If input arguments are unacceptable.

        Example:
            >>> from fe_core.dataset import NumpyDataset
            >>> ds = NumpyDataset({"x": np.arange(1000)})
            >>> ds2 = ds.split(0.1, seed=0)
            >>> len(ds), len(ds2)
            (900, 100)
        """
        splits = self._split_indices(fractions, seed=seed, stratify=stratify)
        children = self._do_split(splits)
        self.fix_split_traceabilty(self, children, fractions, seed, stratify)
        return children[0] if len(children) == 1 else children

    def _class_values(self, key: str) -> List[Any]:
        """Every sample's value of `key` (for stratified splits)."""
        values = []
        for index in range(len(self)):
            sample = self[index]
            if key not in sample:
                raise DatasetArgumentError(f"{type(self).__name__}.split: stratify key {key!r} is not in the data "
                                           f"(keys: {sorted(sample)})")
            values.append(sample[key])
        return values

    def _split_indices(self, fractions: Sequence[Fraction], seed: Optional[int],
                       stratify: Optional[str]) -> List[np.ndarray]:
        """Which indices each new dataset takes (validated; random choices from `seed` or numpy's global state)."""
        name = type(self).__name__
        if not fractions:
            raise DatasetArgumentError(f"{name}.split needs at least one fraction, count or list of indices")
        size = len(self)
        # unseeded: numpy's global generator, or in a data-parallel launch a stream every process draws alike
        rng = np.random.RandomState(seed) if seed is not None else unseeded_random_state()
        available = np.ones(size, dtype=bool)
        requests: List[Union[int, np.ndarray]] = []
        for fraction in fractions:
            if isinstance(fraction, (float, np.floating)):
                if not 0 < fraction < 1:
                    raise DatasetArgumentError(f"{name}.split fractions must be in (0, 1), got {fraction}")
                count = math.ceil(size * float(fraction))  # FastEstimator rounds a fraction's count up
                if count < 1:
                    raise DatasetArgumentError(f"{name}.split fraction {fraction} of {size} samples selects nothing")
                requests.append(count)
            elif isinstance(fraction, (int, np.integer)) and not isinstance(fraction, bool):
                if fraction < 1:
                    raise DatasetArgumentError(f"{name}.split counts must be positive, got {fraction}")
                requests.append(int(fraction))
            elif isinstance(fraction, Iterable) and not isinstance(fraction, (str, bytes)):
                if stratify is not None:
                    raise DatasetArgumentError(f"{name}.split: stratify cannot be combined with index lists")
                explicit = np.asarray(list(fraction), dtype=np.int64)
                if explicit.size and (explicit.min() < 0 or explicit.max() >= size
                                      or len(np.unique(explicit)) != explicit.size or not available[explicit].all()):
                    raise DatasetArgumentError(f"{name}.split indices must be distinct, unused and in [0, {size})")
                available[explicit] = False
                requests.append(explicit)
            else:
                raise DatasetArgumentError(f"{name}.split takes floats, ints or iterables of ints, got {fraction!r}")
        wanted = sum(request for request in requests if isinstance(request, int))
        if wanted > int(available.sum()):
            raise DatasetArgumentError(f"{name}.split cannot take {wanted} samples: {int(available.sum())} are left "
                                       f"to split")
        if stratify is not None:
            return self._stratified(requests, available, rng, stratify)
        chosen: List[np.ndarray] = []
        for request in requests:
            if isinstance(request, np.ndarray):
                chosen.append(request)
                continue
            picked = np.sort(rng.choice(np.flatnonzero(available), size=request, replace=False))
            available[picked] = False
            chosen.append(picked)
        return chosen

    def _stratified(self, requests: List[Union[int, np.ndarray]], available: np.ndarray, rng: Any,
                    key: str) -> List[np.ndarray]:
        """Indices for count requests, each split taking every class in proportion (FastEstimator's counts)."""
        class_of, order = _class_indices(self._class_values(key), type(self).__name__, key)
        size = len(class_of)
        totals = [int(np.count_nonzero(class_of == label)) for label in order]
        supply = [int(np.count_nonzero(available & (class_of == label))) for label in order]
        chosen = []
        for request in requests:
            target = int(request)
            taken = stratified_counts(totals, size, target, supply)
            picked_parts = []
            for label, take in zip(order, taken):
                if take:
                    part = rng.choice(np.flatnonzero(available & (class_of == label)), size=take, replace=False)
                    available[part] = False
                    picked_parts.append(part)
            picked = np.concatenate(picked_parts) if picked_parts else np.zeros(0, dtype=np.int64)
            chosen.append(np.sort(picked))
        return chosen

    def _do_split(self, splits: Sequence[np.ndarray]) -> List["FEDataset"]:
        raise NotImplementedError(f"{type(self).__name__} does not support split()")

    # ------------------------------------------------------------------ summary and keys
    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset (keys from the first sample).

        Returns:
            A summary representation of this dataset.
        """
        sample = self[0] if len(self) else {}
        keys = {key: _summarize_values([value]) for key, value in sample.items()}
        for key_summary in keys.values():
            key_summary.num_unique_values = None
        return DatasetSummary(num_instances=len(self), keys=keys)

    def keys(self) -> List[str]:
        """The keys of this dataset's samples."""
        return list(self.summary().keys)

    def __str__(self) -> str:
        return str(self.summary())

    # ------------------------------------------------------------------ checkpoints
    # The samples are the script's input data, rebuilt by the script: never copied into checkpoints. Attributes a
    # subclass adds (counters, generators, a per-epoch map) are its state and are checkpointed like any object's.
    fe_configuration = ("data",)


@fe_export("fe.dataset.dataset.InMemoryDataset")
class InMemoryDataset(FEDataset):
    """A dataset abstraction to simplify the implementation of datasets which hold their data in memory.

    `ds[i]` returns sample i; `ds["key"]` returns that key's values for every sample, as FastEstimator does (a numpy
    array when the values are arrays, else a list); `ds["key"] = values` replaces or adds a column.

    Args:
        data: A dictionary like {data_index: {<instance dictionary>}}.
    """

    def __init__(self, data: Dict[int, Dict[str, Any]]) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: Union[int, str]) -> Any:
        """Fetch a data instance at a specified index, or a whole column by key name.

        Raises:
            DatasetIndexError: (an IndexError and a KeyError, as FastEstimator raises) If the integer index is out of
                range.
            KeyError: If the key is not in the data.
        """
        if isinstance(index, str):
            return self._column(index)
        if index < 0:
            index += len(self.data)
        try:
            return self.data[index]
        except KeyError:
            raise DatasetIndexError(f"{type(self).__name__} index {index} out of range ({len(self.data)} "
                                    f"samples)") from None

    def _column(self, key: str) -> Any:
        if not self.data:
            raise KeyError(f"{type(self).__name__} is empty, it has no key {key!r}")
        try:
            values = [self.data[index][key] for index in range(len(self.data))]
        except KeyError:
            raise KeyError(f"{type(self).__name__} has no key {key!r} (keys: {self.keys()})") from None
        return np.array(values) if isinstance(values[0], np.ndarray) else values

    def __setitem__(self, key: Union[int, str], value: Any) -> None:
        """Replace sample `key` (an int) with a dict, or set the column `key` (a str) from one value per sample.

        Raises:
            ValueError: If a column's length differs from the dataset's.
        """
        if isinstance(key, str):
            if len(value) != len(self.data):
                raise ValueError(f"{type(self).__name__} column {key!r} needs {len(self.data)} values, got "
                                 f"{len(value)}")
            for index, item in enumerate(value):
                self.data[index][key] = item
            return
        if not isinstance(value, dict):
            raise ValueError(f"{type(self).__name__} samples must be dicts, got {type(value).__name__}")
        self.data[key] = value

    def keys(self) -> List[str]:
        """The keys of the samples: those of the first stored dict, or, for a subclass whose `__getitem__` computes
        samples (adding keys), those of the first sample it returns (looked at with numpy's and python's random
        states put back, so asking never shifts a run's random stream)."""
        if not self.data:
            return []
        if type(self).__getitem__ is InMemoryDataset.__getitem__:
            return list(self.data[0])
        sample = _peek_first(self)
        return list(sample) if isinstance(sample, dict) else list(self.data[0])

    @property
    def get_batch(self) -> Optional[Callable[..., Dict[str, Any]]]:
        """`get_batch(indices, keys=None)`: many samples at once, each key stacked into one array (as the Pipeline's
        default collation stacks them), which lets the Pipeline gather whole batches when no op runs per sample.

        None for subclasses whose `__getitem__` computes samples (the stored dicts are then not the samples).
        """
        if type(self).__getitem__ is not InMemoryDataset.__getitem__:
            return None
        return self._gather

    def _gather(self, indices: Union[Sequence[int], np.ndarray], keys: Optional[Iterable[str]] = None
                ) -> Dict[str, Any]:
        from fe_core.op.numpyop.batch import stack_values
        data = self.data
        rows = [data[index] for index in np.asarray(indices).tolist()]
        names = list(rows[0]) if keys is None else [key for key in keys if key in rows[0]]
        return {key: stack_values(key, [row[key] for row in rows]) for key in names}

    def _clone_with(self, data: Dict[int, Dict[str, Any]]) -> "InMemoryDataset":
        """A new dataset of this class sharing this one's configuration, holding `data`."""
        child = copy.copy(self)
        child.data = data
        return child

    def _do_split(self, splits: Sequence[np.ndarray]) -> List["InMemoryDataset"]:
        children = []
        for split in splits:
            children.append(self._clone_with({new: self.data.pop(int(old)) for new, old in enumerate(split)}))
        self.data = {new: sample for new, (_, sample) in enumerate(sorted(self.data.items()))}
        return children

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset (every stored key summarized over every sample; keys a
        subclass's `__getitem__` adds, summarized from the first sample).

        Returns:
            A summary representation of this dataset.
        """
        keys: Dict[str, KeySummary] = {}
        if self.data:
            for key in self.data[0]:
                values = [sample[key] for sample in self.data.values() if key in sample]
                keys[key] = _summarize_values(values)
            if type(self).__getitem__ is not InMemoryDataset.__getitem__:
                sample = _peek_first(self)
                if isinstance(sample, dict):
                    for key, value in sample.items():
                        if key not in keys:
                            keys[key] = _summarize_values([value])
        return DatasetSummary(num_instances=len(self), keys=keys)
