"""Parameter spaces of an `OptunaSearch`: `Range` (uniform or log-uniform, float or integer), `LogRange`, `Choice`."""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

from fe_core.export import fe_export
from fe_core.search.search import SearchError

__all__ = ["Range", "LogRange", "Choice", "to_distribution"]

Number = Union[int, float]


@fe_export("fe.search.Range")
class Range:
    """Values from `low` to `high` (both inclusive), uniform or (with `log`) log-uniform.

    The range is of integers when both limits are Python integers (`Range(1, 8)`), of floats otherwise
    (`Range(0.0, 1.0)`); `integer` says it explicitly.

    Args:
        low: The smallest value.
        high: The largest value.
        step: Only values `low + k * step` (None: any value; 1 for integers).
        log: Sample log-uniformly (`low` must be positive; no `step`).
        integer: Whether values are integers (None: when both limits are integers).

    Raises:
        AssertionError: If the limits, step or log are inconsistent (a `SearchError`, which is also a ValueError).
    """

    def __init__(self, low: Number, high: Number, step: Number = None, log: bool = False,
                 integer: bool = None) -> None:
        for label, value in (("low", low), ("high", high)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SearchError(f"Range {label} must be a finite number, got {value!r}")
        if high < low:
            raise SearchError(f"Range needs low <= high, got low={low!r}, high={high!r}")
        if log and low <= 0:
            raise SearchError(f"A log-uniform Range needs low > 0, got {low!r}")
        if log and step is not None:
            raise SearchError("A log-uniform Range cannot have a step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or step <= 0):
            raise SearchError(f"Range step must be a positive number or None, got {step!r}")
        self.integer = isinstance(low, int) and isinstance(high, int) if integer is None else bool(integer)
        if self.integer and (low != int(low) or high != int(high) or (step is not None and step != int(step))):
            raise SearchError(f"An integer Range needs integer low, high and step, got {low!r}, {high!r}, {step!r}")
        self.low, self.high, self.step, self.log = low, high, step, bool(log)

    def __repr__(self) -> str:
        kind = "int" if self.integer else "float"
        return f"Range({self.low!r}, {self.high!r}, step={self.step!r}, log={self.log}, {kind})"


@fe_export("fe.search.LogRange")
def LogRange(low: Number, high: Number, integer: bool = None) -> Range:  # pylint: disable=invalid-name
    """A log-uniform `Range` from `low` to `high` (both > 0): `LogRange(1e-4, 1e-1)` for a learning rate."""
    return Range(low, high, log=True, integer=integer)


@fe_export("fe.search.Choice")
class Choice:
    """One of the given values (numbers, strings, booleans or None), each equally likely a priori.

    Args:
        values: The values.
    """

    def __init__(self, values: Sequence[Any]) -> None:
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise SearchError(f"Choice needs a non-empty list of values, got {values!r}")
        for value in values:
            if value is not None and not isinstance(value, (bool, int, float, str)):
                raise SearchError(f"Choice values must be numbers, strings, booleans or None, got {value!r}")
        self.values = list(values)

    def __repr__(self) -> str:
        return f"Choice({self.values!r})"


def to_distribution(space: Any, name: str) -> Any:
    """The Optuna distribution of a `Range` / `Choice` (or a plain list, taken as a Choice)."""
    from optuna import distributions  # pylint: disable=import-outside-toplevel
    if isinstance(space, (list, tuple)):
        space = Choice(space)
    if isinstance(space, Choice):
        return distributions.CategoricalDistribution(space.values)
    if isinstance(space, Range):
        if space.integer:
            return distributions.IntDistribution(int(space.low), int(space.high), log=space.log,
                                                 step=int(space.step or 1))
        return distributions.FloatDistribution(float(space.low), float(space.high), log=space.log,
                                               step=None if space.step is None else float(space.step))
    raise SearchError(f"OptunaSearch params[{name!r}] must be a fe.search.Range, LogRange or Choice (or a list of "
                      f"choices), got {space!r}")
