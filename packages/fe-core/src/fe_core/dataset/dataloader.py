"""`FEDataLoader` and `InfiniteSampler`: a framework-free loader for map-style datasets.

fe's Pipeline plans its epochs itself (see `fe_core.pipeline.loader`); `FEDataLoader` serves code that wants
FastEstimator's loader directly: batches of collated numpy arrays, per-epoch `fe_reset_ds`, datasets that yield
whole batches (`fe_batch_indices`), `steps_per_epoch`, a post-processing function that may drop a batch by returning
FilteredData. Shuffling draws from numpy's global random state.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Sized

import numpy as np

from fe_core.export import fe_export

__all__ = ["FEDataLoader", "InfiniteSampler", "PostProcessFunction"]


@fe_export("fe.dataset.dataloader.PostProcessFunction")
class PostProcessFunction(Protocol):
    """A function run on each collated batch; it may return FilteredData to drop the batch."""

    def __call__(self, data: Dict[str, Any]) -> Any:
        ...


@fe_export("fe.dataset.dataloader.InfiniteSampler")
class InfiniteSampler:
    """A class which never stops sampling.

    Args:
        data_source: The dataset to be sampled.
        shuffle: Whether to shuffle when sampling.
        reset_fn: A function to be invoked (using the provided `shuffle` arg) every time the dataset has been fully
            traversed.
        convert_fn: A function to be invoked (using the current index) every sample in order to convert an integer
            index into some arbitrary alternative index representation.

    Example:
        >>> sampler = iter(InfiniteSampler(range(3), shuffle=False))
        >>> [next(sampler) for _ in range(5)]
        [0, 1, 2, 0, 1]
    """

    def __init__(self, data_source: Sized, shuffle: bool = True, reset_fn: Optional[Callable[[bool], None]] = None,
                 convert_fn: Optional[Callable[[int], Any]] = None) -> None:
        self.data_source = data_source
        self.shuffle = shuffle
        self.reset_fn = reset_fn
        self.convert_fn = convert_fn

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[Any]:
        size = len(self.data_source)
        if size == 0:
            return
        while True:
            order = np.random.permutation(size) if self.shuffle else np.arange(size)
            for index in order.tolist():
                yield self.convert_fn(index) if self.convert_fn is not None else index
            if self.reset_fn is not None:
                self.reset_fn(self.shuffle)


@fe_export("fe.dataset.dataloader.FEDataLoader")
class FEDataLoader:
    """A Data Loader that can handle filtering data.

    Args:
        dataset: The dataset to be drawn from. The dataset may optionally implement `.fe_reset_ds(bool)` and/or
            `.fe_batch_indices(int)` methods to modify the system's sampling behavior (see BatchDataset).
        postprocess_fn: A function to run on a collated batch of data before returning it. This function can return a
            FilteredData object in order to drop the given batch.
        batch_size: The batch size to use (or None if the dataset is already providing a batch).
        steps_per_epoch: How many steps to have per epoch. If None the loader will perform a single pass through the
            dataset. If set, the dataset is truncated or repeated (re-shuffled) until that many steps are produced.
        shuffle: Whether to shuffle the dataset.
        num_workers: Accepted for compatibility; batches are produced in this process.
        collate_fn: What function to use to collate a list of data into a batch (default: stack each key).
        drop_last: Whether to drop the last batch of data if that batch is incomplete (meaningless for batched
            datasets and when `steps_per_epoch` is set).

    Example:
        >>> from fe_core.dataset import NumpyDataset
        >>> loader = FEDataLoader(NumpyDataset({"x": np.arange(5)}), batch_size=2)
        >>> [batch["x"].tolist() for batch in loader]
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset: Any, postprocess_fn: Optional[PostProcessFunction] = None,
                 batch_size: Optional[int] = 1, steps_per_epoch: Optional[int] = None, shuffle: bool = False,
                 num_workers: int = 0, collate_fn: Optional[Callable] = None, drop_last: bool = False) -> None:
        self.dataset = dataset
        self.postprocess_fn = postprocess_fn
        self.batched_dataset = bool(getattr(dataset, "fe_batched", False)) or hasattr(dataset, "fe_batch_indices")
        self.batch_size = None if self.batched_dataset else batch_size
        self.steps_per_epoch = steps_per_epoch
        self.shuffle = shuffle
        self.num_workers = num_workers
        self.drop_last = drop_last and not self.batched_dataset and steps_per_epoch is None
        if collate_fn is None:
            from fe_core.op.numpyop.batch import collate_samples
            collate_fn = collate_samples
        self.collate_fn = collate_fn

    def get_batch_size(self) -> int:
        """The number of samples per batch (for batched datasets, the size of their first batch)."""
        if self.batch_size is not None:
            return self.batch_size
        return len(self.dataset[0]) if self.batched_dataset and len(self.dataset) else 1

    def __len__(self) -> int:
        if self.steps_per_epoch is not None:
            return self.steps_per_epoch
        size = len(self.dataset)
        if self.batched_dataset or self.batch_size is None:
            return size
        return size // self.batch_size if self.drop_last else math.ceil(size / self.batch_size)

    def _groups(self) -> Iterator[List[Any]]:
        """Lists of samples, one per batch, following shuffling, steps_per_epoch and drop_last."""
        reset = getattr(self.dataset, "fe_reset_ds", None)
        if callable(reset):
            reset(self.shuffle)
        if self.batched_dataset:
            sampler = iter(InfiniteSampler(self.dataset, shuffle=False, reset_fn=reset if callable(reset) else None))
            steps = self.steps_per_epoch if self.steps_per_epoch is not None else len(self.dataset)
            for _ in range(steps):
                item = self.dataset[next(sampler)]
                yield item if isinstance(item, list) else [item]
            return
        per_batch = self.batch_size or 1
        sampler = iter(InfiniteSampler(self.dataset, shuffle=self.shuffle,
                                       reset_fn=reset if callable(reset) else None))
        if self.steps_per_epoch is not None:
            for _ in range(self.steps_per_epoch):
                yield [self.dataset[next(sampler)] for _ in range(per_batch)]
            return
        size = len(self.dataset)
        for start in range(0, size, per_batch):
            count = min(per_batch, size - start)
            if count < per_batch and self.drop_last:
                return
            yield [self.dataset[next(sampler)] for _ in range(count)]

    def __iter__(self) -> Iterator[Any]:
        from fe_core.op.numpyop.remove_if import FilteredData
        for samples in self._groups():
            samples = [sample for sample in samples if not isinstance(sample, FilteredData)]
            if not samples:
                continue
            batch = samples[0] if self.batch_size is None and not self.batched_dataset else self.collate_fn(samples)
            if self.postprocess_fn is not None:
                batch = self.postprocess_fn(batch)
                if isinstance(batch, FilteredData):
                    continue
            yield batch

    def shutdown(self) -> None:
        """Close the worker threads used by this iterator (there are none: batches are made in this process)."""
