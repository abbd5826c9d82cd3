"""Small helpers that normalise the container arguments users pass to ops, traces and schedulers."""
from __future__ import annotations

from typing import Iterable, List, Optional, Set, TypeVar, Union

T = TypeVar("T")

__all__ = ["to_list", "to_set", "filter_nones"]


def to_list(data: Union[None, T, Iterable[T]]) -> List[T]:
    """Convert `data` to a list.

    None becomes an empty list, a list is returned as is, tuples and sets become lists, and anything else (including a
    string or a dict) is wrapped in a list of one element.

    Example:
        >>> to_list(None), to_list("x"), to_list(("a", "b")), to_list([1])
        ([], ['x'], ['a', 'b'], [1])
    """
    if data is None:
        return []
    if isinstance(data, list):
        return data
    if isinstance(data, (tuple, set, frozenset)):
        return list(data)
    return [data]


def to_set(data: Union[None, T, Iterable[T]]) -> Set[T]:
    """Convert `data` to a set, with the same rules as `to_list`.

    Example:
        >>> sorted(to_set(["b", "a", "b"]))
        ['a', 'b']
    """
    if data is None:
        return set()
    if isinstance(data, set):
        return data
    if isinstance(data, (list, tuple, frozenset)):
        return set(data)
    return {data}


def filter_nones(items: List[Optional[T]]) -> List[T]:
    """Return a copy of `items` without its None entries (other falsy values are kept).

    Example:
        >>> filter_nones([0, None, "", 3])
        [0, '', 3]
    """
    return [item for item in items if item is not None]


