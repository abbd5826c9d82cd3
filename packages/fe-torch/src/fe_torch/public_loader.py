"""The loader `with pipeline(...) as loader:` and `Pipeline.get_loader` hand to user code when torch tensors are the
public ones: a `torch.utils.data.DataLoader`, as FastEstimator's own loader is, so code checking
`isinstance(loader, torch.utils.data.DataLoader)` (or passing it where a DataLoader is expected) keeps working.

It is fe's `PublicLoader` (batches computed by fe's pipeline, handed out as torch tensors) with DataLoader as a second
base: DataLoader's own `__init__` never runs (it would build a sampler and torch's collation fe does not use);
`dataset`, `batch_size` and `drop_last` answer from the epoch's configuration, as `PublicLoader` defines them.
"""
from __future__ import annotations

from typing import Optional

from fe_core.pipeline.public_loader import PublicLoader
from torch.utils.data import DataLoader

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

    def __repr__(self) -> str:
        return f"TorchPublicLoader({self.loader!r})"
