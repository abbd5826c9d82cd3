"""How a `fe.backend` function finds the code for its argument's tensor type, without importing a framework.

Every tensor function is written once, in a group module of `fe_core.backend` (`reductions`, `elementwise`, ...). Its
numpy case is computed right there; for a torch or TensorFlow value the group's `Dispatch` hands back the backend
module that mirrors the group (`fe_torch.backend.reductions`, `fe_tf.backend.reductions`), and the function calls the
same-named implementation in it:

    _dispatch = Dispatch("reductions")

    def reduce_sum(tensor, axis=None, keepdims=False):
        backend = _dispatch(tensor, "reduce_sum")
        if backend is None:                                   # numpy arrays, numpy and python scalars
            return np.sum(tensor, axis=..., keepdims=keepdims)
        return backend.reduce_sum(tensor, axis, keepdims)

The owner of a type is decided once per type and group (then it is one dict lookup): a class whose MRO holds a class
defined in `torch` belongs to fe_torch, one defined in `tensorflow` or `keras` belongs to fe_tf. The backend module is
imported at that first use, when the user already has the framework loaded (a tensor of it exists), so fe_core itself
never imports a framework. Looking at the MRO also classifies user subclasses (an `nn.Module` or `keras.Model` defined
in `__main__`), which the model functions (`feed_forward`, `get_lr`, ...) dispatch on.
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Dict, Optional, Tuple

import numpy as np

from fe_core.install_hint import install_command

__all__ = ["Dispatch", "FRAMEWORK_PACKAGES", "NUMPY_TYPES", "framework_of", "backend_module"]

# top-level module of a class -> the fe package that implements tensor functions for it
FRAMEWORK_PACKAGES: Dict[str, str] = {"torch": "fe_torch", "tensorflow": "fe_tf", "keras": "fe_tf"}

# types computed by the numpy case of every function (numpy scalar types are recognised through np.generic)
NUMPY_TYPES: Tuple[type, ...] = (np.ndarray, int, float, bool, complex)

_PACKAGE_NAMES = {"fe_torch": "torch", "fe_tf": "tf"}


def framework_of(cls: type) -> Optional[str]:
    """The fe package ('fe_torch' or 'fe_tf') owning instances of `cls`, or None when no framework does.

    Example:
        >>> framework_of(int) is None
        True
    """
    for klass in cls.__mro__:
        package = FRAMEWORK_PACKAGES.get(klass.__module__.partition(".")[0])
        if package is not None:
            return package
    return None


def backend_module(package: str, group: str) -> ModuleType:
    """Import `<package>.backend.<group>` (e.g. `fe_torch.backend.reductions`).

    Raises:
        ImportError: With the extra to install when the backend package is missing.
    """
    name = f"{package}.backend.{group}"
    try:
        # the builtin __import__, not importlib.import_module: autograph (the first call may come from inside a
        # tf.function) leaves builtins alone but warns that it cannot convert importlib's internals
        __import__(name)
        return sys.modules[name]
    except ModuleNotFoundError as error:
        if error.name not in (package, f"{package}.backend"):
            raise
        raise ImportError(f"Tensors of {_PACKAGE_NAMES.get(package, package)!r} need the {package.replace('_', '-')!r}"
                          f" package for fe.backend functions: {install_command(package.replace('_', '-'))}"
                          ) from error


class Dispatch:
    """The per-type router of one group of tensor functions.

    Calling it with a value returns None for numpy arrays and numpy/python scalars (the caller computes those itself),
    or the backend module implementing the group for the value's framework.

    Args:
        group: The module name shared by `fe_core.backend.<group>`, `fe_torch.backend.<group>` and
            `fe_tf.backend.<group>`.
        numpy_types: Extra types the caller's numpy case handles (for example `list` for `concat`'s inputs).

    Raises:
        ValueError: (when called) If the value belongs to no framework and is not numpy data; the message names the
            function and the type.

    Example:
        >>> dispatch = Dispatch("reductions")
        >>> dispatch(np.ones(2), "reduce_sum") is None
        True
    """

    __slots__ = ("group", "_cache")

    def __init__(self, group: str, numpy_types: Tuple[type, ...] = ()) -> None:
        self.group = group
        self._cache: Dict[type, Optional[ModuleType]] = dict.fromkeys(NUMPY_TYPES + tuple(numpy_types))

    def __call__(self, value: Any, function: str) -> Optional[ModuleType]:
        try:
            return self._cache[type(value)]
        except KeyError:
            return self._resolve(type(value), function)

    def _resolve(self, cls: type, function: str) -> Optional[ModuleType]:
        if issubclass(cls, (np.generic, np.ndarray, int, float)):  # numpy scalars, array and number subclasses
            self._cache[cls] = None
            return None
        package = framework_of(cls)
        if package is None:
            raise ValueError(f"fe.backend.{function} does not accept values of type {cls.__module__}."
                             f"{cls.__qualname__}; give it a numpy array, a torch tensor or a TensorFlow tensor")
        module = backend_module(package, self.group)
        self._cache[cls] = module
        return module
