"""`BatchDataset`: every item is a whole batch drawn from one or more datasets (paired, unpaired or balanced)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, FEDataset, KeySummary
from fe_core.dataset._nested_state import NestedDatasetStateMixin
from fe_core.export import fe_export

__all__ = ["BatchDataset"]


def _keys_of(dataset: Any) -> List[str]:
    keys = getattr(dataset, "keys", None)
    if callable(keys):
        return list(keys())
    first = dataset[0]
    return list(first[0] if isinstance(first, list) else first)  # a dataset whose items are lists of samples


def _item_size(dataset: Any) -> int:
    """Samples per item: a dataset whose items are lists of samples gives that many (FastEstimator flattens them)."""
    first = dataset[0]
    return len(first) if isinstance(first, list) else 1


def _samples(dataset: Any, indices: Iterable[int]) -> List[Dict[str, Any]]:
    """The samples of `dataset`'s items at `indices`, an item that is a list of samples giving each of them."""
    samples: List[Dict[str, Any]] = []
    for index in indices:
        item = dataset[index]
        if isinstance(item, list):
            samples.extend(dict(sample) for sample in item)
        else:
            samples.append(dict(item))
    return samples


def _index_stream(size: int, count: int, shuffle: bool, rng: Any) -> np.ndarray:
    """`count` indices of a dataset of `size`: whole passes (each permuted when `shuffle`), cut at `count`."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    passes = -(-count // size)
    return np.concatenate([rng.permutation(size) if shuffle else np.arange(size) for _ in range(passes)])[:count]


@fe_export("fe.dataset.batch_dataset.BatchDataset", "fe.dataset.BatchDataset")
class BatchDataset(NestedDatasetStateMixin, FEDataset):
    """BatchDataset extracts a list (batch) of data from a single dataset or multiple datasets.

    Each item `ds[i]` is a list of sample dicts that together form batch i; the Pipeline runs its per-sample ops on
    each of them and collates them (its batch size is not used). Use cases:

    1. An unpaired dataset from datasets with no common keys: `BatchDataset([ds_a, ds_b], num_samples=[4, 4])` gives
       batches {"a": <4x...>, "b": <4x...>} (sample k of each dataset merged into one dict).
    2. Deterministic class balanced sampling from datasets with the same keys: `num_samples=[3, 5]` gives batches of 8
       with 3 samples from the first dataset and 5 from the second.
    3. Probabilistic sampling: `num_samples=8, probability=[0.7, 0.3]` draws each of the 8 samples from the first
       dataset with probability 0.7.

    Every epoch (`fe_reset_ds`, called by the Pipeline) draws new pairings from numpy's global random state; each
    dataset is traversed in whole passes (shuffled when the epoch shuffles), so every sample is used before any is
    repeated; when the epoch shuffles, the samples inside each batch are shuffled too. An epoch has
    max(ceil(len(dataset_i) / num_samples_i)) batches, or max(ceil(len(dataset_i) / num_samples / probability_i))
    with `probability`.

    Args:
        datasets: The dataset(s) to use for batch sampling. Non-FEDatasets work too, but lose `split()`.
        num_samples: Number of samples to draw from the `datasets`. May be a single int if used in conjunction with
            `probability`, otherwise a list of ints of len(`datasets`) is required.
        probability: Probability to draw from each dataset. Only allowed if `num_samples` is an integer.

    Raises:
        DatasetArgumentError: On inconsistent arguments, or datasets whose keys partly overlap.
    """

    fe_batched = True  # tells the Pipeline that every item is a list of samples forming one batch

    def __init__(self,
                 datasets: Union[Any, Iterable[Any]],
                 num_samples: Union[int, Iterable[int]],
                 probability: Optional[Iterable[float]] = None) -> None:
        self.datasets = list(datasets) if isinstance(datasets, (list, tuple)) else [datasets]
        if not self.datasets or any(len(dataset) == 0 for dataset in self.datasets):
            raise DatasetArgumentError("BatchDataset needs at least one dataset and no empty ones")
        self.probability = None if probability is None else [float(p) for p in probability]
        if self.probability is not None:
            if not isinstance(num_samples, int) or num_samples < 1:
                raise DatasetArgumentError("BatchDataset: with probability, num_samples must be one positive int")
            if len(self.probability) != len(self.datasets) or abs(sum(self.probability) - 1) > 1e-6 or \
                    min(self.probability) < 0:
                raise DatasetArgumentError(f"BatchDataset probability must hold {len(self.datasets)} non-negative "
                                           f"values summing to 1, got {self.probability}")
            self.num_samples: Union[int, List[int]] = int(num_samples)
        else:
            counts = [num_samples] * len(self.datasets) if isinstance(num_samples, int) and \
                len(self.datasets) == 1 else num_samples
            if isinstance(counts, int) or len(list(counts)) != len(self.datasets):
                raise DatasetArgumentError(f"BatchDataset num_samples must be a list of {len(self.datasets)} ints "
                                           f"(one per dataset) unless probability is given")
            self.num_samples = [int(count) for count in counts]
            if min(self.num_samples) < 1:
                raise DatasetArgumentError(f"BatchDataset num_samples must be positive, got {self.num_samples}")
        key_sets = [set(_keys_of(dataset)) for dataset in self.datasets]
        self._item_sizes = [_item_size(dataset) for dataset in self.datasets]
        self.same_feature = all(keys == key_sets[0] for keys in key_sets)
        if not self.same_feature:
            union = set().union(*key_sets)
            if sum(len(keys) for keys in key_sets) != len(union):
                raise DatasetArgumentError(f"BatchDataset datasets must have either the same keys or no common keys, "
                                           f"got {[sorted(keys) for keys in key_sets]}")
            per_item = [count * size for size, count in zip(self._item_sizes, self.num_samples)]
            if self.probability is not None or len(set(per_item)) != 1:
                raise DatasetArgumentError("BatchDataset over datasets with different keys needs the same num_samples "
                                           "for each and no probability (samples are merged pairwise)")
        self._keys = sorted(set().union(*key_sets)) if not self.same_feature else list(_keys_of(self.datasets[0]))
        self.index_maps: List[List[np.ndarray]] = []
        self._orders: List[np.ndarray] = []

    def fe_member_datasets(self) -> List[Any]:
        """The datasets this one holds (their state is checkpointed with its own)."""
        return list(self.datasets)

    # ------------------------------------------------------------------ size and sampling
    def __len__(self) -> int:
        sizes = [len(dataset) for dataset in self.datasets]
        if self.probability is not None:  # batches until each dataset is expected to be seen once
            return max(math.ceil(size / int(self.num_samples) / p)  # type: ignore[call-overload]
                       for size, p in zip(sizes, self.probability) if p > 0)
        return max(math.ceil(size / count) for size, count in zip(sizes, self.num_samples))  # type: ignore[arg-type]

    def fe_reset_ds(self, shuffle: bool = True, *, seed: Optional[int] = None) -> None:
        """Rearrange the index maps of this BatchDataset.

        Args:
            shuffle: Whether to shuffle the dataset. If False the method will do nothing so long as index maps already
                exist.
            seed: A random seed to control the shuffling (default: numpy's global random state).

        This method is invoked by the Pipeline at the start of every epoch, giving each epoch different random
        pairings of the basis datasets.
        """
        if not shuffle and self.index_maps:
            return
        rng = np.random.RandomState(seed) if seed is not None else np.random
        batches = len(self)
        if self.probability is None:
            streams = [_index_stream(len(dataset), batches * count, shuffle, rng).reshape(batches, count)
                       for dataset, count in zip(self.datasets, self.num_samples)]  # type: ignore[arg-type]
            self.index_maps = [[stream[batch] for stream in streams] for batch in range(batches)]
            per_item = [count * size for count, size in zip(self.num_samples, self._item_sizes)]  # type: ignore
            self._orders = [rng.permutation(sum(per_item) if self.same_feature else per_item[0])
                            for _ in range(batches)] if shuffle else []
            return
        choices = rng.choice(len(self.datasets), size=(batches, int(self.num_samples)),  # type: ignore[arg-type]
                             p=self.probability)
        counts = [(choices == which).sum(axis=1) for which in range(len(self.datasets))]
        streams = [_index_stream(len(dataset), int(count.sum()), shuffle, rng)
                   for dataset, count in zip(self.datasets, counts)]
        offsets = [np.concatenate([[0], np.cumsum(count)]) for count in counts]
        self.index_maps = [[streams[which][offsets[which][batch]:offsets[which][batch + 1]]
                            for which in range(len(self.datasets))] for batch in range(batches)]
        self._orders = [rng.permutation(int(self.num_samples)) for _ in range(batches)] if shuffle else []

    def fe_batch_indices(self, batch_idx: int) -> List[List[int]]:
        """Compute which internal dataset indices to use for a given batch.

        Args:
            batch_idx: Which batch is it.

        Returns:
            For each dataset, the indices of its samples in batch `batch_idx`.
        """
        if not self.index_maps:
            self.fe_reset_ds(shuffle=False)
        return [indices.tolist() for indices in self.index_maps[batch_idx]]

    def __getitem__(self, batch_idx: int) -> List[Dict[str, Any]]:
        """Batch `batch_idx` as a list of sample dicts.

        Raises:
            IndexError: If `batch_idx` is out of range.
        """
        if not -len(self) <= batch_idx < len(self):
            raise IndexError(f"BatchDataset batch {batch_idx} out of range ({len(self)} batches)")
        per_dataset = self.fe_batch_indices(batch_idx)
        if self.same_feature:
            samples = [sample for dataset, indices in zip(self.datasets, per_dataset)
                       for sample in _samples(dataset, indices)]
        else:
            parts = [_samples(dataset, indices) for dataset, indices in zip(self.datasets, per_dataset)]
            samples = []
            for position in range(len(parts[0])):
                merged: Dict[str, Any] = {}
                for part in parts:
                    merged.update(part[position])
                samples.append(merged)
        order = self._orders[batch_idx % len(self._orders)] if self._orders else None
        if order is not None and len(order) == len(samples):
            samples = [samples[position] for position in order]
        return samples

    def keys(self) -> List[str]:
        return list(self._keys)

    # ------------------------------------------------------------------ split and summary
    def split(self, *fractions: Any, seed: Optional[int] = None,
              stratify: Optional[str] = None) -> Union["BatchDataset", List["BatchDataset"]]:
        """Split every underlying dataset with the same arguments and build one BatchDataset per fraction.

        See `FEDataset.split` for the arguments.

        Raises:
            NotImplementedError: If the user created this dataset using one or more non-FEDataset inputs.
        """
        if not all(isinstance(dataset, FEDataset) for dataset in self.datasets):
            raise NotImplementedError("BatchDataset.split needs every input dataset to be an FEDataset")
        parts = [dataset.split(*fractions, seed=seed, stratify=stratify) for dataset in self.datasets]
        parts = [part if isinstance(part, list) else [part] for part in parts]
        children = [BatchDataset([part[index] for part in parts], num_samples=self.num_samples,
                                 probability=self.probability) for index in range(len(parts[0]))]
        self.index_maps = []
        return children[0] if len(children) == 1 else children

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset.

        Returns:
            A summary representation of this dataset.
        """
        keys: Dict[str, KeySummary] = {}
        for dataset in self.datasets:
            if isinstance(dataset, FEDataset):
                keys.update(dataset.summary().keys)
            else:
                keys.update({key: KeySummary(dtype="unknown") for key in _keys_of(dataset)})
        return DatasetSummary(num_instances=len(self), keys=keys)
