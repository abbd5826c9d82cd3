"""Find the fe_torch / fe_tf half of a `fe.util` function for a value, without importing a framework here.

A value's framework is read from its class (`fe_core.backend.dispatch.framework_of`: a class whose MRO holds a class
of `torch` belongs to fe_torch, one of `tensorflow`/`keras` to fe_tf). The backend module `<package>.util.<module>` is
imported only then, when the user already has that framework loaded (a tensor or model of it exists).
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from fe_core.backend.dispatch import framework_of
from fe_core.install_hint import install_command

__all__ = ["util_module_for", "loaded_util_modules"]

_EXTRAS = {"fe_torch": "torch", "fe_tf": "tf"}
_FRAMEWORK_MODULES = {"fe_torch": ("torch",), "fe_tf": ("tensorflow",)}
_cache: Dict[Tuple[type, str], Optional[ModuleType]] = {}


def _import(package: str, module: str) -> ModuleType:
    try:
        return importlib.import_module(f"{package}.util.{module}")
    except ModuleNotFoundError as error:
        if error.name not in (package, f"{package}.util"):
            raise
        distribution = package.replace('_', '-')
        raise ImportError(f"fe.util needs the {distribution} package for {_EXTRAS[package]} values: "
                          f"{install_command(distribution)}") from error


def util_module_for(value: Any, module: str) -> Optional[ModuleType]:
    """The `<fe_torch|fe_tf>.util.<module>` that handles `value`, or None when `value` is not a framework object.

    Args:
        value: A tensor, variable, model, ... (or anything else).
        module: The mirrored module name ('tensors', 'models', 'devices').

    Returns:
        The backend module, or None.
    """
    key = (type(value), module)
    try:
        return _cache[key]
    except KeyError:
        pass
    package = framework_of(type(value))
    found = None if package is None else _import(package, module)
    _cache[key] = found
    return found


def loaded_util_modules(module: str) -> List[ModuleType]:
    """The `<package>.util.<module>` of every framework the process has already imported (torch first)."""
    found = []
    for package, frameworks in _FRAMEWORK_MODULES.items():
        if any(name in sys.modules for name in frameworks):
            try:
                found.append(_import(package, module))
            except ImportError:
                continue
    return found
