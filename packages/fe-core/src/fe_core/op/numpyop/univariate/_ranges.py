"""Parameter ranges of the random image ops: FastEstimator's "a number means (-x, x)" rule and RUA's rescaling."""
from __future__ import annotations

from numbers import Real
from typing import Sequence, Tuple, Union

__all__ = ["symmetric_range", "scale_range"]


def symmetric_range(limit: Union[float, Sequence[float]], name: str, owner: str) -> Tuple[float, float]:
    """Turn `limit` into a `(low, high)` range: a single number `x` gives `(-x, x)`, a pair is kept as it is.

    Args:
        limit: A number or a pair of numbers.
        name: The argument's name, for the error message.
        owner: The op's name, for the error message.

    Returns:
        The range as a tuple of two floats.

    Raises:
        ValueError: If `limit` is neither a number nor a pair with low <= high.

    Example:
        >>> symmetric_range(0.5, "limit", "Brightness")
        (-0.5, 0.5)
    """
    if isinstance(limit, Real) and not isinstance(limit, bool):
        return -float(limit), float(limit)
    try:
        low, high = (float(value) for value in limit)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError(f"{owner} {name} must be a number or a (low, high) pair, got {limit!r}") from None
    if low > high:
        raise ValueError(f"{owner} {name} must have low <= high, got {limit!r}")
    return low, high


def scale_range(limits: Tuple[float, float], magnitude_coef: float) -> Tuple[float, float]:
    """Shrink `limits` around its middle to `magnitude_coef` of its width (how RUA sets an op's strength).

    Args:
        limits: The `(low, high)` range.
        magnitude_coef: The strength in [0, 1]; 1 keeps the range, 0 collapses it to its middle.

    Returns:
        The rescaled range.

    Example:
        >>> scale_range((-0.8, 0.8), 0.5)
        (-0.4, 0.4)
    """
    middle = (limits[0] + limits[1]) / 2
    extent = magnitude_coef * (limits[1] - limits[0]) / 2
    return middle - extent, middle + extent
