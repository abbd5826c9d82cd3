"""`InterleaveDataset`: alternate whole batches from several datasets, step by step, following a pattern."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, FEDataset, KeySummary
from fe_core.dataset._nested_state import NestedDatasetStateMixin
from fe_core.export import fe_export

__all__ = ["InterleaveDataset", "InterleaveIndexError", "interleaved_steps"]


class InterleaveIndexError(IndexError, StopIteration):
    """A batch index beyond the epoch: an IndexError, and the StopIteration FastEstimator's InterleaveDataset raises."""


def _keys_of(dataset: Any) -> List[str]:
    keys = getattr(dataset, "keys", None)
    return list(keys()) if callable(keys) else list(dataset[0])


def interleaved_steps(pattern: Sequence[int], batch_counts: Sequence[int]) -> int:
    """How many steps an interleaved epoch has: as many whole repetitions of `pattern` as every dataset can fill.

    Args:
        pattern: Dataset index per step (repeated).
        batch_counts: Full batches each dataset yields in one pass.

    Returns:
        The number of steps.

    Raises:
        DatasetArgumentError: If some dataset cannot fill even one repetition of the pattern.

    Example:
        >>> interleaved_steps([0, 0, 1], [5, 2])
        6
    """
    uses = [list(pattern).count(which) for which in range(len(batch_counts))]
    cycles = min(count // use for count, use in zip(batch_counts, uses) if use)
    if cycles < 1:
        raise DatasetArgumentError(f"InterleaveDataset: some dataset does not have enough samples for a single "
                                   f"repetition of the pattern (full batches per dataset: {list(batch_counts)}, "
                                   f"uses per repetition: {uses}); consider ExtendDataset to increase its length")
    return cycles * len(pattern)


@fe_export("fe.dataset.interleave_dataset.InterleaveDataset", "fe.dataset.InterleaveDataset")
class InterleaveDataset(NestedDatasetStateMixin, FEDataset):
    """A Dataset class that can allow for a step-wise interleaving of multiple datasets.

    This will be useful for training multi-task models when we vary dataset used on a per-step basis. For example,
    given datasets `ds1` and `ds2`, these all take step 0 from ds1, step 1 from ds2, and repeat:
    ```python
    dataset = InterleaveDataset(datasets=[ds1, ds2])
    dataset = InterleaveDataset(datasets=[ds1, ds2], pattern=[0, 1])
    dataset = InterleaveDataset(datasets={"a": ds1, "b": ds2}, pattern=["a", "b"])
    ```
    Two steps of ds1 then three of ds2: `pattern=[0, 0, 1, 1, 1]` (or with names).

    When datasets are given as a dictionary, its keys act as `ds_id`s for the Pipeline's ops, so each dataset can have
    its own preprocessing and its own `Batch` (for example `Batch(batch_size=32, ds_id="a")`,
    `Batch(batch_size=64, ds_id="b")`).

    Limitations (as in FastEstimator): keys not common to all datasets should not be used by the Network or Traces;
    each dataset behaves as if `drop_last` were True; an epoch is as many whole repetitions of the pattern as every
    dataset can fill with full batches.

    Args:
        datasets: List of datasets or a dictionary with key being the dataset name, value being the dataset.
        pattern: The step-wise interleaving pattern: dataset indices when `datasets` is a list, names when it is a
            dictionary. Default: each dataset once, in order.

    Raises:
        DatasetArgumentError: (a ValueError and AssertionError) If there are fewer than two datasets, or the pattern
            is shorter than two, names unknown datasets or leaves a dataset out.
    """

    def __init__(self, datasets: Union[Mapping[str, Any], Sequence[Any]],
                 pattern: Optional[Union[List[str], List[int]]] = None) -> None:
        if isinstance(datasets, Mapping):
            self.names: Optional[List[str]] = list(datasets)
            self.datasets = list(datasets.values())
            for name in self.names:
                if not isinstance(name, str) or not name or name.startswith("!"):
                    raise DatasetArgumentError(f"InterleaveDataset names must be strings not starting with '!', got "
                                               f"{name!r}")
        else:
            self.names = None
            self.datasets = list(datasets)
        if len(self.datasets) < 2:
            raise DatasetArgumentError(f"InterleaveDataset requires more than one dataset, got {len(self.datasets)}")
        if pattern is not None and (not isinstance(pattern, list) or len(pattern) < 2):
            raise DatasetArgumentError(f"InterleaveDataset pattern must be a list of more than one entry, got "
                                       f"{pattern!r}")
        if pattern is None:
            self.pattern = list(range(len(self.datasets)))
        elif self.names is not None:
            unknown = [name for name in pattern if name not in self.names]
            if unknown:
                raise DatasetArgumentError(f"InterleaveDataset pattern names {unknown} are not datasets "
                                           f"({self.names})")
            self.pattern = [self.names.index(name) for name in pattern]  # type: ignore[arg-type]
        else:
            bad = [which for which in pattern if not isinstance(which, int) or not 0 <= which < len(self.datasets)]
            if bad:
                raise DatasetArgumentError(f"InterleaveDataset pattern entries {bad} are not dataset indices "
                                           f"0..{len(self.datasets) - 1}")
            self.pattern = list(pattern)  # type: ignore[arg-type]
        unused = [which for which in range(len(self.datasets)) if which not in self.pattern]
        if unused:
            raise DatasetArgumentError(f"InterleaveDataset pattern never uses datasets {unused}")
        self.batch_sizes: List[int] = [1] * len(self.datasets)
        self.index_maps: List[np.ndarray] = [np.arange(len(dataset)) for dataset in self.datasets]

    def fe_member_datasets(self) -> List[Any]:
        """The datasets this one holds (their state is checkpointed with its own)."""
        return list(self.datasets)

    def set_batch_sizes(self, batch_sizes: List[int]) -> None:
        """Set the batch size of each dataset: how many samples `dataset[i]` holds when step i draws from it, and so
        how many steps `len()` counts. The Pipeline sets them from each ds_id's batch size before every epoch.

        Raises:
            DatasetArgumentError: If the count or values are invalid.
        """
        if len(batch_sizes) != len(self.datasets) or any(not isinstance(b, int) or b < 1 for b in batch_sizes):
            raise DatasetArgumentError(f"InterleaveDataset needs {len(self.datasets)} positive batch sizes, got "
                                       f"{batch_sizes}")
        self.batch_sizes = list(batch_sizes)

    def sub_ds_ids(self, ds_id: str) -> List[str]:
        """The ds_id each dataset's ops are chosen with: its name, or the Pipeline's `ds_id` for a list."""
        return list(self.names) if self.names is not None else [ds_id] * len(self.datasets)

    def op_ds_ids(self, ds_id: str) -> List[List[str]]:
        """The ds_ids each dataset's ops are chosen by, as FastEstimator chooses them: an op runs on a named dataset
        when it runs on that name or on the Pipeline's `ds_id` of this InterleaveDataset (both, when both apply)."""
        return [[ds_id, name] if ds_id and name != ds_id else [name] for name in self.sub_ds_ids(ds_id)]

    def _step_sizes(self) -> List[int]:
        """Items each dataset gives per step: its batch size, or 1 for a dataset whose items are whole batches
        (BatchDataset), which the Pipeline never re-batches."""
        return [1 if getattr(dataset, "fe_batched", False) else size
                for dataset, size in zip(self.datasets, self.batch_sizes)]

    def __len__(self) -> int:
        """Steps per epoch with the batch sizes set by `set_batch_sizes` (1 each by default)."""
        return interleaved_steps(self.pattern, [len(dataset) // size
                                                for dataset, size in zip(self.datasets, self._step_sizes())])

    def __getitem__(self, batch_idx: int) -> List[Dict[str, Any]]:
        """The batch of step `batch_idx`: a list of samples from the dataset the pattern names for that step.

        Step `batch_idx` takes the next `batch_sizes[d]` samples (in the order of this epoch's index map) of its
        dataset d, as FastEstimator's InterleaveDataset does; the items of a dataset of whole batches (BatchDataset)
        are unpacked into the list.

        Raises:
            InterleaveIndexError: (an IndexError and a StopIteration, as FastEstimator raises) If `batch_idx` is not
                a step of the epoch.
        """
        length = len(self)
        if batch_idx < 0:
            batch_idx += length
        if not 0 <= batch_idx < length:
            raise InterleaveIndexError(f"InterleaveDataset batch {batch_idx} out of range ({length} batches)")
        cycle, position = divmod(batch_idx, len(self.pattern))
        which = self.pattern[position]
        size = self._step_sizes()[which]
        uses_per_cycle = self.pattern.count(which)
        start = (cycle * uses_per_cycle + self.pattern[:position].count(which)) * size
        dataset, index_map = self.datasets[which], self.index_maps[which]
        if len(index_map) != len(dataset):  # the dataset changed length (split) since the map was drawn
            index_map = self.index_maps[which] = np.arange(len(dataset))
        batch: List[Dict[str, Any]] = []
        for index in index_map[start:start + size].tolist():
            item = dataset[index]
            if isinstance(item, list):
                batch.extend(item)
            else:
                batch.append(item)
        return batch

    def keys(self) -> List[str]:
        """The keys common to every dataset."""
        common = set(_keys_of(self.datasets[0]))
        for dataset in self.datasets[1:]:
            common &= set(_keys_of(dataset))
        return sorted(common)

    def fe_reset_ds(self, shuffle: bool = True, *, seed: Optional[int] = None) -> None:
        """Rearrange the index maps of this InterleaveDataset (and reset the datasets that have a reset).

        Args:
            shuffle: Whether to shuffle the order in which `dataset[i]` takes each dataset's samples; False restores
                the natural order.
            seed: A random seed to control the shuffling (default: numpy's global random state).
        """
        for dataset in self.datasets:
            if hasattr(dataset, "fe_reset_ds"):
                dataset.fe_reset_ds(shuffle, seed=seed)
        maps = []
        for which, dataset in enumerate(self.datasets):
            if not shuffle:
                maps.append(np.arange(len(dataset)))
            elif seed is not None:  # each dataset its own order, all conditioned on the seed
                maps.append(np.random.RandomState(seed + which).permutation(len(dataset)))
            else:
                maps.append(np.random.permutation(len(dataset)))
        self.index_maps = maps

    def split(self, *fractions: Any, seed: Optional[int] = None,
              stratify: Optional[str] = None) -> Union["InterleaveDataset", List["InterleaveDataset"]]:
        """Split every dataset with the same arguments; one InterleaveDataset (same names and pattern) per fraction.

        `stratify` applies to the datasets that have that key; the others split without it.

        Raises:
            NotImplementedError: If the user created this dataset using one or more non-FEDataset inputs.
        """
        if not all(isinstance(dataset, FEDataset) for dataset in self.datasets):
            raise NotImplementedError("InterleaveDataset.split needs every input dataset to be an FEDataset")
        parts = [dataset.split(*fractions, seed=seed,  # stratified only where the dataset has the key, as in FE
                               stratify=stratify if stratify in _keys_of(dataset) else None)
                 for dataset in self.datasets]
        parts = [part if isinstance(part, list) else [part] for part in parts]
        children = []
        for index in range(len(parts[0])):
            members = [part[index] for part in parts]
            child = InterleaveDataset(dict(zip(self.names, members)) if self.names is not None else members,
                                      pattern=[self.names[w] for w in self.pattern] if self.names is not None
                                      else list(self.pattern))
            child.batch_sizes = list(self.batch_sizes)
            children.append(child)
        return children[0] if len(children) == 1 else children

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset: every dataset's keys, and one instance per step (batch)
        as FastEstimator reports it (`num_instances == len(self)`).

        Returns:
            A summary representation of this dataset.
        """
        keys: Dict[str, KeySummary] = {}
        for dataset in self.datasets:
            if isinstance(dataset, FEDataset):
                keys.update(dataset.summary().keys)
            else:
                keys.update({key: KeySummary(dtype="unknown") for key in _keys_of(dataset) if key not in keys})
        return DatasetSummary(num_instances=len(self), keys=keys)
