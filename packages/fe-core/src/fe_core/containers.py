"""Small helpers that normalise the container arguments users pass to ops, traces and schedulers."""
from __future__ import annotations

from typing import Any, Collection, Dict, Iterable, List, Mapping, Optional, Set, Tuple, TypeVar, Union, overload

from fe_core.export import fe_export

T = TypeVar("T")

__all__ = ["to_list", "to_set", "filter_nones"]


@fe_export("fe.util.base_util.to_list", "fe.util.to_list")
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


@fe_export("fe.util.base_util.to_set", "fe.util.to_set")
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


@overload
def filter_nones(items: Set[Optional[T]]) -> Set[T]:
    ...


@overload
def filter_nones(items: Tuple[Optional[T], ...]) -> Tuple[T, ...]:
    ...


@overload
def filter_nones(items: List[Optional[T]]) -> List[T]:
    ...


@overload
def filter_nones(items: Mapping[Any, Optional[T]]) -> Dict[Any, T]:
    ...


@fe_export("fe.util.base_util.filter_nones", "fe.util.filter_nones")
def filter_nones(items: Collection) -> Collection:
    """Return a copy of `items` without its None entries (other falsy values are kept).

    Lists, tuples and sets keep their type; for a mapping, the keys whose value is None are removed (a dict is
    returned).

    Example:
        >>> filter_nones([0, None, "", 3]), filter_nones((None, 1)), filter_nones({"a": None, "b": 2})
        ([0, '', 3], (1,), {'b': 2})
    """
    if isinstance(items, list):
        return [item for item in items if item is not None]
    if isinstance(items, Mapping):
        return {key: value for key, value in items.items() if value is not None}
    if isinstance(items, tuple):
        return tuple(item for item in items if item is not None)
    if isinstance(items, (set, frozenset)):
        return type(items)(item for item in items if item is not None)
    return [item for item in items if item is not None]
