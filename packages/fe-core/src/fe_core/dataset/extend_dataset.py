"""`ExtendDataset`: stretch or shrink a dataset's epoch to a chosen length."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary
from fe_core.dataset._nested_state import NestedDatasetStateMixin
from fe_core.export import fe_export

__all__ = ["ExtendDataset"]


@fe_export("fe.dataset.extend_dataset.ExtendDataset", "fe.dataset.ExtendDataset")
class ExtendDataset(NestedDatasetStateMixin):
    """ExtendDataset either extends or contracts the length of provided Dataset.

    An epoch has `spoof_length` samples. At the start of every epoch the Pipeline asks for a new index map: whole
    passes over the original dataset (shuffled when the epoch shuffles), cut at `spoof_length`, so a shorter epoch
    sees different samples each time and a longer one repeats every sample before any repeats twice.

    Samples a filter removes with replacement are replaced, as in FastEstimator, by the samples that come next in those
    passes (the rest of the data, then the next pass): items past `spoof_length` (`ds[spoof_length + k]`) continue
    the epoch's passes, and the Pipeline reads them (`fe_continuous_stream`) instead of starting the epoch over.

    Args:
        dataset: The Original dataset(s) which need expansion or contraction.
        spoof_length: Length to which original dataset must be expanded or contracted to. (New desired length)

    Unlike FastEstimator's (whose `len()` stays the original length while its loader draws `spoof_length` samples),
    `len()` is `spoof_length` here: the Pipeline and any other loader see the epoch's true size.

    Raises:
        DatasetArgumentError: (a ValueError and AssertionError) If `spoof_length` is not a positive int, the dataset
            is empty or is itself an ExtendDataset.

    Example:
        >>> from fe_core.dataset import NumpyDataset
        >>> ds = ExtendDataset(NumpyDataset({"x": np.arange(3)}), spoof_length=7)
        >>> len(ds), [int(ds[i]["x"]) for i in range(7)]
        (7, [0, 1, 2, 0, 1, 2, 0])
    """

    def __init__(self, dataset: Any, spoof_length: int) -> None:
        if not isinstance(spoof_length, int) or isinstance(spoof_length, bool) or spoof_length < 1:
            raise DatasetArgumentError(f"ExtendDataset spoof_length must be a positive int, got {spoof_length!r}")
        if isinstance(dataset, ExtendDataset):
            raise DatasetArgumentError("ExtendDataset: the input dataset cannot be an ExtendDataset")
        if len(dataset) == 0:
            raise DatasetArgumentError("ExtendDataset needs a non-empty dataset")
        self.dataset = dataset
        self.fe_batched = bool(getattr(dataset, "fe_batched", False))  # items of a BatchDataset are whole batches
        self.spoof_length = spoof_length
        self.index_map = np.arange(spoof_length) % len(dataset)
        self.pass_orders: List[np.ndarray] = []  # this epoch's passes over the dataset (index_map is their start)
        self.pass_seed, self.pass_shuffle = 0, False  # how passes after those are drawn
        if callable(getattr(dataset, "get_batch", None)):
            self.get_batch = self._get_batch

    def fe_member_datasets(self) -> List[Any]:
        """The datasets this one holds (their state is checkpointed with its own)."""
        return [self.dataset]

    def __len__(self) -> int:
        return self.spoof_length

    fe_continuous_stream = True  # items past len() continue the epoch's passes (replacements for filtered samples)

    def _pass(self, number: int) -> np.ndarray:
        if number < len(self.pass_orders):
            return self.pass_orders[number]
        size = len(self.dataset)
        if not self.pass_shuffle:
            return np.arange(size)
        return np.random.default_rng([self.pass_seed, number]).permutation(size)

    def _source_indices(self, indices: np.ndarray) -> np.ndarray:
        """The wrapped dataset's indices of items `indices` (past `spoof_length`: the passes go on)."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.size == 0 or int(indices.max()) < self.spoof_length:
            return self.index_map[indices]
        numbers, offsets = np.divmod(indices, len(self.dataset))
        result = np.empty_like(indices)
        for number in np.unique(numbers).tolist():
            chosen = numbers == number
            result[chosen] = self._pass(number)[offsets[chosen]]
        return result

    def __getitem__(self, index: Union[int, str]) -> Any:
        if isinstance(index, str):
            return self.dataset[index]
        if 0 <= index < self.spoof_length:
            return self.dataset[int(self.index_map[index])]
        if index < 0:
            return self.dataset[int(self.index_map[index])]
        number, offset = divmod(int(index), len(self.dataset))
        return self.dataset[int(self._pass(number)[offset])]

    def _get_batch(self, indices: Union[Sequence[int], np.ndarray], keys: Optional[Iterable[str]] = None
                   ) -> Dict[str, Any]:
        return self.dataset.get_batch(self._source_indices(np.asarray(indices)), keys=keys)

    def keys(self) -> List[str]:
        keys = getattr(self.dataset, "keys", None)
        return list(keys()) if callable(keys) else list(self.dataset[0])

    def fe_reset_ds(self, shuffle: bool = True, *, seed: Optional[int] = None) -> None:
        """Draw this epoch's index map (whole passes over the dataset, each permuted when `shuffle`).

        Args:
            shuffle: Whether to permute each pass.
            seed: A seed for the permutations (default: numpy's global random state).
        """
        size = len(self.dataset)
        rng = np.random.RandomState(seed) if seed is not None else np.random
        passes = -(-self.spoof_length // size)
        parts = [rng.permutation(size) if shuffle else np.arange(size) for _ in range(passes)]
        self.index_map = np.concatenate(parts)[:self.spoof_length]
        self.pass_orders = parts
        self.pass_seed, self.pass_shuffle = (int(seed) if seed is not None else 0), bool(shuffle)
        if hasattr(self.dataset, "fe_reset_ds"):
            self.dataset.fe_reset_ds(shuffle, seed=seed)

    def summary(self) -> DatasetSummary:
        """The wrapped dataset's summary, with `num_instances` = `spoof_length`."""
        summary = self.dataset.summary()
        summary.num_instances = self.spoof_length
        return summary
