"""`fe_export`: declare where a public name lives in the `fe` namespace, once, next to its definition.

fe's code lives in fe_core, fe_torch and fe_tf, but users import FastEstimator's dotted paths from the `fe` package
(`fe.trace.metric.Accuracy`, `fe.backend.reduce_mean`). Each public class or function says which `fe` paths it has
with this decorator; `python tools/gen_namespace.py` reads the declarations (statically, without importing anything)
and writes the `fe` tree of lazy, explicit re-exports. The decorator itself only records the paths on the object.

Example:
    >>> @fe_export("fe.trace.metric.accuracy.Accuracy", "fe.trace.metric.Accuracy")
    ... class Accuracy:
    ...     pass
    >>> Accuracy.__fe_paths__
    ('fe.trace.metric.accuracy.Accuracy', 'fe.trace.metric.Accuracy')

A name that is not a class or function (a type alias, a constant) is declared with the call form on its own line,
`fe_export("fe.types.Tensor")(Tensor)`, which the generator also reads.
"""
from __future__ import annotations

from typing import Callable, Tuple, TypeVar

__all__ = ["fe_export", "fe_paths"]

T = TypeVar("T")


def _check(paths: Tuple[str, ...]) -> None:
    if not paths:
        raise ValueError("fe_export needs at least one dotted path such as 'fe.trace.metric.Accuracy'")
    for path in paths:
        parts = path.split(".") if isinstance(path, str) else []
        if len(parts) < 2 or parts[0] != "fe" or not all(part.isidentifier() for part in parts):
            raise ValueError(f"fe_export paths are dotted paths under 'fe' (like 'fe.trace.metric.Accuracy'), "
                             f"got {path!r}")


def fe_export(*paths: str) -> Callable[[T], T]:
    """Declare the `fe` dotted path(s) of a public name (the first is where FastEstimator defines it).

    Args:
        *paths: Dotted paths under `fe`, each ending in the public name (`fe.op.tensorop.loss.CrossEntropy`). A name
            that FastEstimator re-exports from a package `__init__` lists every path users import it from.

    Returns:
        A decorator that stores the paths as `__fe_paths__` on the object (where it can hold attributes) and returns
        the object unchanged.

    Raises:
        ValueError: If a path is not a dotted path under `fe`.
    """
    _check(paths)

    def record(obj: T) -> T:
        if getattr(obj, "_is_protocol", False):  # an attribute would become a member of a typing.Protocol
            return obj
        try:
            setattr(obj, "__fe_paths__", tuple(paths))
        except (AttributeError, TypeError):  # typing aliases, builtins: the declaration is read from source anyway
            pass
        return obj

    return record


def fe_paths(obj: object) -> Tuple[str, ...]:
    """The `fe` paths declared for `obj` with `fe_export` (empty when none were)."""
    return tuple(getattr(obj, "__fe_paths__", ()))
