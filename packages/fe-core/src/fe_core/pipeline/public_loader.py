"""What `with pipeline(...) as loader:` hands to user code: batches of framework tensors, as in FastEstimator.

The Pipeline computes on numpy (the fast path the Estimator iterates). Where a loader leaves fe for user code, its
batches become the tensors FastEstimator's loader yields, decided as `Pipeline.get_results` decides it
(`fe_core.framework.public.public_backend`: torch tensors on the CPU when torch is installed, the installed
framework's otherwise, numpy where none is), and a string column a list of str, as its collation makes. The
conversion is zero-copy where the array allows it (torch shares a batch array's memory). A framework loader given as
data (a torch DataLoader, a tf.data.Dataset) is handed out
unchanged, as FastEstimator does. Where torch is the public backend the loader is also a
`torch.utils.data.DataLoader` (the backend supplies the class: `Backend.public_loader_class`), as FastEstimator's own
loader is, answering `dataset`, `batch_size` and `drop_last` from the epoch's configuration.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

from fe_core.framework.base import Backend
from fe_core.framework.public import public_backend, to_public

__all__ = ["PublicLoader", "public_loader"]


class PublicLoader:
    """An epoch loader whose batches are `backend`'s host tensors; everything else is the wrapped loader's.

    Args:
        loader: The epoch's loader of numpy batches.
        backend: The backend whose tensors batches become.
    """

    def __init__(self, loader: Any, backend: Backend) -> None:
        self.loader = loader
        self.backend = backend

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        backend = self.backend
        for batch in self.loader:
            yield to_public(batch, backend, string_lists=True)

    def __len__(self) -> int:
        return len(self.loader)

    def __getattr__(self, name: str) -> Any:
        if name in ("loader", "backend"):  # not set yet (copy, unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.loader, name)

    # What a DataLoader answers, from the epoch's configuration (FastEstimator's loader is a torch DataLoader).
    @property
    def dataset(self) -> Any:
        """The dataset batches are drawn from (the one given to the Pipeline; None when switched off)."""
        dataset = self.loader.plan.dataset
        return dataset.dataset if getattr(dataset, "fe_wrapper", False) else dataset  # the Pipeline's marking

    @property
    def batch_size(self) -> Optional[int]:
        """Samples per batch; None where the dataset's items are whole batches (as a DataLoader without
        auto-batching) or nothing batches."""
        plan = self.loader.plan
        return None if getattr(plan.dataset, "fe_batched", False) else plan.batch_size

    @property
    def drop_last(self) -> bool:
        """Whether an incomplete last batch is dropped."""
        return bool(self.loader.plan.drop_last)

    def get_batch_size(self) -> Optional[int]:
        """The batch size: `batch_size`, else that of a dataset of whole batches (BatchDataset's), else None."""
        size = self.batch_size
        return size if size is not None else getattr(self.dataset, "batch_size", None)

    def __repr__(self) -> str:
        return f"PublicLoader({self.loader!r}, {type(self.backend).__name__})"


def public_loader(loader: Any, native: Optional[Any] = None) -> Any:
    """The loader user code gets: `native` (the user's own framework loader) when given, else `loader`'s batches as
    framework tensors (`loader` itself where no framework is installed)."""
    if native is not None:
        return native
    backend = public_backend()
    if backend is None:
        return loader
    return (backend.public_loader_class() or PublicLoader)(loader, backend)
