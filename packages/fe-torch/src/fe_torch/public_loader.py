"""The loader `with pipeline(...) as loader:` and `Pipeline.get_loader` hand to user code when torch tensors are the
public ones: a `torch.utils.data.DataLoader`, as FastEstimator's own loader is, so code checking
`isinstance(loader, torch.utils.data.DataLoader)` (or passing it where a DataLoader is expected) keeps working.

It is fe's `PublicLoader` (batches computed by fe's pipeline, handed out as torch tensors) with DataLoader as a second
base: DataLoader's own `__init__` never runs (it would build a sampler and torch's collation fe does not use);
`dataset`, `batch_size` and `drop_last` answer from the epoch's configuration, as `PublicLoader` defines them, and
every other member a DataLoader's `__init__` would set has a value describing the epoch (`sampler`, `batch_sampler`,
`collate_fn`, ...), so code reading them (a data-parallel loop's `loader.sampler`, a trainer's loader checks) works;
they describe the epoch, fe's pipeline draws it (iterating never reads them).
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Callable, Optional

from fe_core.pipeline.public_loader import PublicLoader
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, SequentialSampler
from torch.utils.data._utils.collate import default_collate, default_convert
from torch.utils.data.dataloader import _DatasetKind

__all__ = ["TorchPublicLoader"]


class TorchPublicLoader(PublicLoader, DataLoader):  # type: ignore[misc]  # DataLoader is generic in its item type
    """An epoch loader of torch-tensor batches that is also a `torch.utils.data.DataLoader`.

    Iteration, `len`, attribute look-ups and pickling are `PublicLoader`'s (fe's loader, unchanged in speed).

    Args:
        loader: The epoch's loader of numpy batches.
        backend: The torch backend (whose tensors batches become).
    """

    # PublicLoader.__init__ comes first in the MRO, so DataLoader.__init__ never runs; what DataLoader's other members
    # read is set here
    num_workers = 0  # torch's worker processes are not used (fe's pipeline has its own, `Pipeline(num_process=)`)
    pin_memory = False
    timeout = 0
    prefetch_factor: Optional[int] = None
    persistent_workers = False
    generator = None
    worker_init_fn = None
    in_order = True
    pin_memory_device = ""
    _DataLoader__multiprocessing_context = None  # read by DataLoader's `multiprocessing_context` property
    _dataset_kind = _DatasetKind.Map
    _IterableDataset_len_called = None
    _iterator = None

    @cached_property
    def sampler(self) -> Sampler:
        """The epoch's order as a DataLoader describes it: a RandomSampler over the dataset when the epoch shuffles,
        a SequentialSampler otherwise (fe's pipeline draws its own order; the sampler is not read to iterate)."""
        shuffle = bool(getattr(self.loader, "shuffle", False))
        return RandomSampler(self.dataset) if shuffle else SequentialSampler(self.dataset)

    @cached_property
    def batch_sampler(self) -> Optional[BatchSampler]:
        """`sampler` cut into `batch_size` batches, or None where items are whole batches (no auto-batching)."""
        size = self.batch_size
        return None if size is None else BatchSampler(self.sampler, size, self.drop_last)

    @property
    def collate_fn(self) -> Callable[[Any], Any]:
        """torch's default collation (or conversion, without auto-batching), as a DataLoader built without one
        reports it; fe's pipeline collates its batches itself."""
        return default_collate if self.batch_size is not None else default_convert

    def __repr__(self) -> str:
        return f"TorchPublicLoader({self.loader!r})"
