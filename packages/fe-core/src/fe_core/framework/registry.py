"""Finding backends: built-in lazy entries, the `fe.backends` entry-point group, and `register_backend` for tests.

Nothing here imports a framework. A backend module is imported only when it is asked for by name, or when its
framework is already in `sys.modules` and a model has to be classified.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Union

from fe_core.framework.base import Backend
from fe_core.determinism import deterministic_seed, on_seed
from fe_core.install_hint import BACKEND_DISTRIBUTIONS, install_command

__all__ = ["BackendNotInstalledError", "register_backend", "unregister_backend", "get_backend", "backend_for_model",
           "available_backends", "loaded_backends", "framework_backends", "model_backend"]

ENTRY_POINT_GROUP = "fe.backends"


class BackendNotInstalledError(ImportError):
    """Raised when a backend is asked for but its package is not installed."""


@dataclass
class _Entry:
    name: str
    target: str  # "module:attribute"
    extra: Optional[str]  # the short name of the fe distribution that installs it ('torch' -> fe-torch)
    framework_module: Optional[str]  # framework top-level module; None = always consulted
    factory: Optional[Callable[[], Backend]] = None


_BUILTIN = {
    "torch": _Entry("torch", "fe_torch.framework:TorchBackend", "torch", "torch"),
    "tf": _Entry("tf", "fe_tf.framework:TFBackend", "tf", "tensorflow"),
}
_discovered: Dict[str, _Entry] = {}  # from the entry-point group, read once
_registered: Dict[str, _Entry] = {}  # from register_backend; wins over the two above
_instances: Dict[str, Backend] = {}
_entry_points_read = False


def _read_entry_points() -> None:
    global _entry_points_read  # pylint: disable=global-statement
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib import metadata  # pylint: disable=import-outside-toplevel  (slow to import; needed rarely)
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        builtin = _BUILTIN.get(entry_point.name)
        _discovered[entry_point.name] = _Entry(entry_point.name, entry_point.value,
                                               builtin.extra if builtin else None,
                                               builtin.framework_module if builtin else None)


def _entries() -> Dict[str, _Entry]:
    _read_entry_points()
    merged = dict(_BUILTIN)
    merged.update(_discovered)
    merged.update(_registered)
    return merged


def register_backend(name: str,
                     backend: Union[Backend, Callable[[], Backend]],
                     framework_module: Optional[str] = None) -> None:
    """Register a backend under `name` (overriding any entry point or built-in of that name).

    Args:
        name: The backend's name, as used for `framework` in `TensorOp.build`.
        backend: A Backend instance, or a no-argument callable creating one on first use.
        framework_module: The framework's top-level module. When given, the backend is consulted to classify models
            only once that module is in `sys.modules`.

    Example:
        >>> class Null(Backend):
        ...     name = "null"
        >>> register_backend("null", Null())
        >>> get_backend("null").name
        'null'
        >>> unregister_backend("null")
    """
    _read_entry_points()
    factory = backend if not isinstance(backend, Backend) else None
    _registered[name] = _Entry(name, "", None, framework_module, factory)
    _instances.pop(name, None)
    if isinstance(backend, Backend):
        _instances[name] = backend
        seed = deterministic_seed()
        if seed is not None:  # enable_deterministic ran before this backend was loaded
            backend.seed(seed)


def unregister_backend(name: str) -> None:
    """Remove a backend registered with `register_backend` (a built-in or entry point of that name comes back)."""
    _registered.pop(name, None)
    _instances.pop(name, None)


def get_backend(name: str) -> Backend:
    """The backend called `name`, importing its package on first use.

    Raises:
        BackendNotInstalledError: If the backend's package is not installed; the message names the extra to install.
        KeyError: If no backend of that name is known.
    """
    if name in _instances:
        return _instances[name]
    entries = _entries()
    if name not in entries:
        raise KeyError(f"Unknown backend {name!r}; known backends: {sorted(entries)}")
    entry = entries[name]
    if entry.factory is not None:
        backend = entry.factory()
    else:
        module_name, _, attribute = entry.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            missing = getattr(error, "name", None) or module_name
            distribution = BACKEND_DISTRIBUTIONS.get(entry.extra or "")
            hint = f" Install it with: {install_command(distribution)}" if distribution else ""
            raise BackendNotInstalledError(
                f"The {name!r} backend is not available ({missing!r} could not be imported).{hint}") from error
        backend = getattr(module, attribute)()
    _instances[name] = backend
    seed = deterministic_seed()
    if seed is not None:
        backend.seed(seed)
    return backend


def available_backends() -> List[str]:
    """Names of the backends whose packages are installed (found without importing them)."""
    names = []
    for name, entry in _entries().items():
        if entry.factory is not None or name in _instances:
            names.append(name)
            continue
        module_name = entry.target.partition(":")[0]
        try:
            found = importlib.util.find_spec(module_name.split(".")[0]) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            names.append(name)
    return names


def loaded_backends() -> List[Backend]:
    """The backend instances created so far in this process."""
    return list(_instances.values())


def framework_backends() -> List[Backend]:
    """The backends whose framework is already imported (plus those that declare no framework), loading them.

    Backends whose package is not installed are skipped. Nothing here imports a framework.
    """
    backends = []
    for name, entry in _entries().items():
        if entry.framework_module is not None and entry.framework_module not in sys.modules:
            continue
        try:
            backends.append(get_backend(name))
        except BackendNotInstalledError:
            continue
    return backends


def backend_for_model(model: Any) -> Optional[Backend]:
    """The backend that owns `model`, or None when no backend claims it.

    Only backends whose framework is already imported (or that declare no framework) are consulted, so classifying a
    torch model never imports TensorFlow.
    """
    for backend in framework_backends():
        if backend.owns_model(model):
            return backend
    return None


_MODEL_BACKENDS: Dict[type, str] = {}  # model class -> the name of the backend owning its instances


def model_backend(model: Any) -> Backend:
    """The backend of `model`'s own framework, for anything that acts on a model (learning rates, saving, loading).

    Traces and functions acting on a model dispatch here, never on the System's network: a torch model read or
    saved under a System whose Network is TensorFlow goes through the torch backend. Decided once per model class.

    Raises:
        ValueError: If no installed backend claims `model`.
    """
    name = _MODEL_BACKENDS.get(type(model))
    if name is not None and name in _instances:
        return _instances[name]
    backend = backend_for_model(model)
    if backend is None:
        raise ValueError(f"No installed backend recognises model {getattr(model, 'model_name', model)!r} of type "
                         f"{type(model).__module__}.{type(model).__qualname__} (a torch.nn.Module or a Keras model "
                         f"is expected)")
    _MODEL_BACKENDS[type(model)] = backend.name
    return backend


def _seed_loaded_backends(seed: int) -> None:
    """Seed every backend created so far (`enable_deterministic` calls this; later ones are seeded as they load)."""
    for backend in loaded_backends():
        backend.seed(seed)


on_seed(_seed_loaded_backends)
