"""Helpers for writing configurations: choose between two values (`IfElse`), and turn a number into a range."""
from __future__ import annotations

from typing import Literal, Tuple, TypeVar, Union, overload

from fe_core.export import fe_export

__all__ = ["IfElse", "param_to_range"]

KT = TypeVar("KT")
VT = TypeVar("VT")


@overload
def IfElse(cond: Literal[True], y: KT, n: VT = None) -> KT:  # noqa: N802 (FastEstimator's name)
    ...


@overload
def IfElse(cond: Literal[False], y: KT, n: VT = None) -> VT:  # noqa: N802
    ...


@fe_export("fe.util.base_util.IfElse", "fe.util.IfElse")
def IfElse(cond: bool, y: KT, n: VT = None) -> Union[KT, VT]:  # noqa: N802
    """Return `y` when `cond` is true, else `n`: keeps optional list entries readable in configurations.

    Example:
        >>> extra_augs = False
        >>> ops = [op for op in ["Minmax", IfElse(extra_augs, "RandomJitter")] if op is not None]
        >>> ops
        ['Minmax']
        >>> IfElse(True, lambda: "big dataset", lambda: "small dataset")()  # defer expensive construction
        'big dataset'

    Args:
        cond: Which branch to return.
        y: The return value when `cond` is True.
        n: The return value when `cond` is False.

    Returns:
        The value according to the given `cond`.
    """
    return y if cond else n


@fe_export("fe.util.base_util.param_to_range", "fe.util.param_to_range")
def param_to_range(
        data: Union[int, float, Tuple[int, int], Tuple[float, float]]) -> Union[Tuple[int, int], Tuple[float, float]]:
    """Convert a single int or float value to a tuple signifying a symmetric range; pass ranges through as tuples.

    Example:
        >>> param_to_range(7), param_to_range([7, 8]), param_to_range((3.1, 4.3)), param_to_range(-3.2)
        ((-7, 7), (7, 8), (3.1, 4.3), (-3.2, 3.2))

    Args:
        data: A number `x` (meaning the range (-|x|, |x|)) or a (low, high) pair.

    Returns:
        The input `data` in tuple form for a range.

    Raises:
        ValueError: If `data` is neither a number nor a pair.
    """
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return (-abs(data), abs(data))
    if isinstance(data, (list, tuple)) and len(data) == 2:
        return tuple(data)
    raise ValueError(f"param_to_range: expected a number or a (low, high) pair, got {data!r}")
