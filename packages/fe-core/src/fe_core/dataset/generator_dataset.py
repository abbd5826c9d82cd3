"""`GeneratorDataset`: samples drawn from a Python generator, a fixed number per epoch."""
from __future__ import annotations

from typing import Any, Dict, Generator, List, Optional

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, FEDataset, _summarize_values
from fe_core.distributed.communicator import get_communicator
from fe_core.export import fe_export

__all__ = ["GeneratorDataset"]


@fe_export("fe.dataset.generator_dataset.GeneratorDataset", "fe.dataset.GeneratorDataset")
class GeneratorDataset(FEDataset):
    """A dataset from a generator function.

    Every `dataset[i]` returns the generator's next sample (the index is ignored). For runs that repeat exactly and
    resume mid-epoch, let the generator draw its randomness from numpy's global random state (np.random.*) or Python's
    `random`: in a Pipeline each draw of the generator runs with both seeded by (run seed, epoch, the sample's
    position in the epoch), whether the trainer draws it (`num_process=0`) or the generator runs ahead in a worker
    process of its own (`num_process>0`), so the batches are bitwise the same for any `num_process` and a run
    resumed mid-epoch repeats them.

    In a data-parallel run of N processes the generator's stream is split by rank rather than repeated on every
    rank: each draw takes N samples of the process's generator and keeps the rank-th (so ranks running the same
    generator train on different samples); rank 0 prints one line saying so.

    Args:
        generator: The generator (an iterator of sample dicts) to draw samples from; a generator function is called
            once to start it.
        samples_per_epoch: How many samples should be drawn from the generator during an epoch. Note that the
            generator will actually be invoked more times than the number specified here (the Pipeline looks at one
            sample to learn the keys, leaving numpy's random state as it was).

    Raises:
        DatasetArgumentError: If `samples_per_epoch` is not a positive int.

    Example:
        >>> def numbers():
        ...     while True:
        ...         yield {"x": np.random.rand(2)}
        >>> ds = GeneratorDataset(numbers(), samples_per_epoch=100)
        >>> len(ds), ds[0]["x"].shape
        (100, (2,))
    """

    def __init__(self, generator: Generator[Dict[str, Any], int, None], samples_per_epoch: int) -> None:
        if not isinstance(samples_per_epoch, int) or isinstance(samples_per_epoch, bool) or samples_per_epoch < 1:
            raise DatasetArgumentError(f"GeneratorDataset samples_per_epoch must be a positive int, got "
                                       f"{samples_per_epoch!r}")
        if callable(generator) and not hasattr(generator, "__next__"):
            generator = generator()  # a generator function: start it
        if not hasattr(generator, "__next__"):
            raise DatasetArgumentError(f"GeneratorDataset needs a generator (or generator function), got "
                                       f"{type(generator).__name__}")
        self.generator = generator
        self.samples_per_epoch = samples_per_epoch
        self._keys: Optional[List[str]] = None
        self._split_noted = False

    def __len__(self) -> int:
        return self.samples_per_epoch

    def __getitem__(self, index: int) -> Dict[str, Any]:
        """The generator's next sample.

        Raises:
            IndexError: If `index` is out of range.
            StopIteration: If the generator is exhausted.
        """
        if not -self.samples_per_epoch <= index < self.samples_per_epoch:
            raise IndexError(f"GeneratorDataset index {index} out of range ({self.samples_per_epoch} samples)")
        communicator = get_communicator()
        world, rank = communicator.world_size, communicator.rank
        if world > 1:
            if not self._split_noted and rank == 0:
                print(f"FastEstimator-Warn: a GeneratorDataset in a run of {world} processes is split by rank: each "
                      f"process keeps every {world}th sample of its generator (sample k * {world} + rank)")
            self._split_noted = True
            for _ in range(rank):
                next(self.generator)
        sample = next(self.generator)
        for _ in range(world - rank - 1):
            next(self.generator)
        if self._keys is None and isinstance(sample, dict):
            self._keys = list(sample)
        return sample

    def keys(self) -> List[str]:
        """The keys of the generator's samples.

        The first call draws one sample to look at and then puts numpy's global random state back, so asking for the
        keys never shifts the random stream (runs stay reproducible and resumable).
        """
        if self._keys is None:
            random_state = np.random.get_state()
            try:
                self[0]
            finally:
                np.random.set_state(random_state)
        return list(self._keys or [])

    def _do_split(self, splits: Any) -> List["FEDataset"]:
        raise DatasetArgumentError("GeneratorDataset cannot be split: its samples do not exist before they are drawn")

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset (from one drawn sample).

        Returns:
            A summary representation of this dataset.
        """
        sample = self[0]
        keys = {key: _summarize_values([value]) for key, value in sample.items()}
        for key_summary in keys.values():
            key_summary.num_unique_values = None
        return DatasetSummary(num_instances=self.samples_per_epoch, keys=keys)
