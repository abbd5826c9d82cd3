"""Framework tensors at the public boundary: what `Pipeline.get_results`, `Network.transform`, slicers called directly
and `SaliencyNet` hand back to user code.

fe computes on numpy on the host (the fast path), and converts once, where a result leaves fe for user code, to the
tensors FastEstimator users get there: torch tensors when torch is installed (FastEstimator's pipeline yields torch
tensors), the installed framework's tensors otherwise, numpy only where no framework is installed. Which framework is
installed is looked up with `importlib.util.find_spec`; no framework is imported here (the backend that converts
imports its own framework, as the conversion needs it).
"""
from __future__ import annotations

import importlib.util
from typing import Any, Callable, Optional

import numpy as np

from fe_core.backend.dispatch import framework_of
from fe_core.framework.base import Backend
from fe_core.framework.registry import BackendNotInstalledError, get_backend

__all__ = ["public_framework", "public_backend", "to_public", "to_host", "framework_name_of", "restore_like",
           "PUBLIC_DEVICE"]

#: Results handed to user code live on the host, as FastEstimator's loaders and CPU copies of predictions do.
PUBLIC_DEVICE = "cpu"

# (backend name, framework module, backend package), in order of preference: torch first, as FastEstimator
_PREFERENCE = (("torch", "torch", "fe_torch"), ("tf", "tensorflow", "fe_tf"))
_NUMERIC_KINDS = "biufc"
_PACKAGE_TO_NAME = {"fe_torch": "torch", "fe_tf": "tf"}
_cached: Optional[str] = None
_looked_up = False


def _installed(module: str) -> bool:
    """Whether `module` is an installed package (a bare directory of that name on sys.path, which Python would
    import as a namespace package, does not count)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def public_framework() -> Optional[str]:
    """The backend name ('torch' or 'tf') whose tensors results become, or None where no framework is installed.

    torch wins when both are installed (with their fe backend packages), as FastEstimator's pipeline yields torch
    tensors. Decided once per process, without importing a framework.

    Example:
        >>> public_framework() in (None, "torch", "tf")
        True
    """
    global _cached, _looked_up  # pylint: disable=global-statement
    if not _looked_up:
        _cached = next((name for name, module, package in _PREFERENCE if _installed(module) and _installed(package)),
                       None)
        _looked_up = True
    return _cached


def public_backend() -> Optional[Backend]:
    """The backend converting public results (see `public_framework`), or None: results stay numpy."""
    name = public_framework()
    if name is None:
        return None
    try:
        return get_backend(name)
    except BackendNotInstalledError:
        return None


def _is_numeric_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC_KINDS


def to_public(data: Any, backend: Optional[Backend], string_lists: bool = False) -> Any:
    """Convert the numeric numpy arrays and numpy scalars in (nested dicts, lists, tuples of) `data` to `backend`'s
    tensors on the host. Strings, object arrays, python values and tensors are left as they are. With no backend,
    `data` is returned unchanged. Arrays that are views of other memory are copied first, so the tensors never share
    a dataset's memory.

    Args:
        data: A batch (dict) or a nested collection of values.
        backend: The backend whose tensors to make (None: keep numpy).
        string_lists: Also turn numpy arrays of strings into (nested) lists of str, as FastEstimator's loader
            collates a string column (only where a backend converts).

    Returns:
        The same structure (a dict subclass becomes a plain dict) holding tensors.
    """
    if backend is None:
        return data
    return _convert(data, lambda value: backend.to_tensor(value, PUBLIC_DEVICE), string_lists)


def _convert(data: Any, convert: Callable[[Any], Any], string_lists: bool = False) -> Any:
    if string_lists and isinstance(data, np.ndarray) and data.dtype.kind in "US":
        return data.tolist()
    if _is_numeric_array(data):
        if not data.flags.writeable or not data.flags.owndata:
            data = data.copy()  # a view may be a dataset's own memory: a user's in-place edit must not reach it
        return convert(data)
    if isinstance(data, np.generic) and np.asarray(data).dtype.kind in _NUMERIC_KINDS:
        return convert(np.asarray(data))
    if isinstance(data, dict):
        return {key: _convert(value, convert, string_lists) for key, value in data.items()}
    if isinstance(data, list):
        return [_convert(value, convert, string_lists) for value in data]
    if isinstance(data, tuple) and not hasattr(data, "_fields"):
        return tuple(_convert(value, convert, string_lists) for value in data)
    return data


def framework_name_of(value: Any) -> Optional[str]:
    """The backend name ('torch', 'tf') owning a tensor `value`, or None for numpy and python values."""
    package = framework_of(type(value))
    return _PACKAGE_TO_NAME.get(package) if package is not None else None


def to_host(value: Any) -> Any:
    """A torch or tf tensor (or nested collection of them) as numpy arrays on the host; other values unchanged."""
    if isinstance(value, dict):
        return {key: to_host(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_host(item) for item in value)
    name = framework_name_of(value)
    if name is None:
        return value
    return get_backend(name).to_numpy(value)


def restore_like(value: Any, like: Any) -> Any:
    """`value` (numpy, possibly nested) as tensors of the framework of `like` (on `like`'s device for torch); numpy
    when `like` is not a framework tensor.

    Used by the slicers: they compute on numpy and hand back the type they were given.
    """
    name = framework_name_of(like)
    if name is None:
        return value
    device = getattr(like, "device", None) if name == "torch" else None
    backend = get_backend(name)
    return _convert(value, lambda array: backend.to_tensor(array, device if device is not None else PUBLIC_DEVICE))
