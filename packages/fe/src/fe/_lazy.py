"""Lazy attributes for the generated `fe` namespace modules (PEP 562 `__getattr__` and `__dir__`).

Every generated module under `fe` (see `tools/gen_namespace.py`) maps its public names to the module that defines them
and its subpackages to their modules, and imports nothing until a name is touched: `import fe` stays cheap and never
imports a framework, and `fe.architecture.pytorch.LeNet` imports torch (never TensorFlow) only when it is used.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Dict, Iterable, List, Tuple


__all__ = ["attach"]

# Backend packages -> the backend that holds them, for the error a missing backend raises.
_BACKEND_EXTRAS = {"fe_torch": "torch", "torch": "torch", "fe_tf": "tf", "tensorflow": "tf", "keras": "tf"}


def _load(owner: str, name: str, target: str) -> Any:
    """Import `target` ('module:attribute' or 'module') for `owner.name`, naming the extra when a backend is missing."""
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        missing = (getattr(error, "name", None) or "").split(".")[0]
        source = module_name.split(".")[0]
        extra = _BACKEND_EXTRAS.get(missing) or (_BACKEND_EXTRAS.get(source) if missing in ("", source) else None)
        if extra is None:
            raise
        # Imported here: fe_core's package __init__ loads the whole core, and `import fe` must stay cheap.
        from fe_core.install_hint import BACKEND_DISTRIBUTIONS, install_command

        backend = BACKEND_DISTRIBUTIONS[extra]
        raise ImportError(f"{owner}.{name} needs the {backend} backend ({missing or source!r} is not installed): "
                          f"{install_command(backend)}") from error
    return getattr(module, attribute) if attribute else module


def attach(owner: str, attributes: Dict[str, str], submodules: Iterable[str]
           ) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """Make `__getattr__` and `__dir__` for the module `owner`.

    Args:
        owner: The module's name (`__name__`).
        attributes: Public name -> 'defining.module:attribute'.
        submodules: Names of the module's child modules, reachable as attributes.

    Returns:
        (`__getattr__`, `__dir__`) for the module's globals. A loaded value is cached in the module.
    """
    children = set(submodules)
    names = set(attributes) | children

    def __getattr__(name: str) -> Any:  # pylint: disable=invalid-name
        if name in attributes:
            value = _load(owner, name, attributes[name])
        elif name in children:
            value = importlib.import_module(f"{owner}.{name}")
        else:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        setattr(importlib.import_module(owner), name, value)
        return value

    def __dir__() -> List[str]:  # pylint: disable=invalid-name
        return sorted(set(names) | set(vars(sys.modules[owner])))

    return __getattr__, __dir__
