"""What `with pipeline(...) as loader:` hands to user code: batches of framework tensors, as in FastEstimator.

The Pipeline computes on numpy (the fast path the Estimator iterates). Where a loader leaves fe for user code, its
batches become the tensors FastEstimator's loader yields, decided as `Pipeline.get_results` decides it
(`fe_core.framework.public.public_backend`: torch tensors on the CPU when torch is installed, the installed
framework's otherwise, numpy where none is), and a string column a list of str, as its collation makes. The
conversion is zero-copy where the array allows it (torch shares a batch array's memory). A framework loader given as
data (a torch DataLoader, a tf.data.Dataset) is handed out
unchanged, as FastEstimator does.
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

    def __repr__(self) -> str:
        return f"PublicLoader({self.loader!r}, {type(self.backend).__name__})"


def public_loader(loader: Any, native: Optional[Any] = None) -> Any:
    """The loader user code gets: `native` (the user's own framework loader) when given, else `loader`'s batches as
    framework tensors (`loader` itself where no framework is installed)."""
    if native is not None:
        return native
    backend = public_backend()
    return loader if backend is None else PublicLoader(loader, backend)
