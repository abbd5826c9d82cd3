"""`Summary`: the history of a run, `history[mode][key][step] = value`, and `ValWithError`."""
from __future__ import annotations

from collections import defaultdict
import math
from typing import Any, DefaultDict, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
from fe_core.export import fe_export

__all__ = ["Summary", "ValWithError", "average_summaries"]


@fe_export("fe.summary.summary.ValWithError", "fe.summary.ValWithError")
class ValWithError(NamedTuple):
    """A value with its lower and upper bounds (for example a mean with a confidence interval).

    Example:
        >>> str(ValWithError(0.1, 0.2, 0.3))
        '(0.1, 0.2, 0.3)'
    """
    y_min: float
    y: float
    y_max: float

    def __str__(self) -> str:
        return f"({self.y_min}, {self.y}, {self.y_max})"

    def as_tuple(self) -> Tuple[float, float, float]:
        """`(y_min, y, y_max)` as a plain tuple."""
        return (self.y_min, self.y, self.y_max)


def _history() -> DefaultDict[str, DefaultDict[str, Dict[int, Any]]]:
    return defaultdict(lambda: defaultdict(dict))


@fe_export("fe.summary.summary.Summary", "fe.summary.Summary")
class Summary:
    """The recorded history of an experiment.

    A Summary is truthy only when it has a name: the System records into it only for named experiments, as in
    FastEstimator (`estimator.fit("my_run")` returns a Summary, `estimator.fit()` returns None).

    Args:
        name: The experiment's name, or None for an unnamed (non-recording) run.
        system_config: A description of the configuration that produced the run.

    Example:
        >>> s = Summary("exp")
        >>> s.history["train"]["loss"][1] = 0.7
        >>> bool(s), bool(Summary(None)), s.history["train"]["loss"]
        (True, False, {1: 0.7})
    """

    def __init__(self, name: Optional[str], system_config: Any = None) -> None:
        self.name = name
        self.system_config = system_config
        self.history: DefaultDict[str, DefaultDict[str, Dict[int, Any]]] = _history()

    def __bool__(self) -> bool:
        return bool(self.name)

    def merge(self, other: "Summary") -> None:
        """Add `other`'s history into this one (its values win where both recorded the same mode, key and step).

        Args:
            other: The summary to merge in.
        """
        for mode, keys in other.history.items():
            for key, steps in keys.items():
                self.history[mode][key].update(steps)

    def __repr__(self) -> str:
        return f"<Summary {self.name!r}: " + ", ".join(
            f"{mode}[{', '.join(sorted(keys))}]" for mode, keys in self.history.items()) + ">"

    def get_state(self) -> Dict[str, Any]:
        """The summary as plain data (for checkpoints)."""
        return {
            "name": self.name,
            "history": {mode: {key: dict(steps) for key, steps in keys.items()} for mode, keys in self.history.items()},
        }

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore what `get_state` returned."""
        self.name = state["name"]
        self.history = _history()
        for mode, keys in state["history"].items():
            for key, steps in keys.items():
                self.history[mode][key].update({int(step): value for step, value in steps.items()})


def _number(value: Any) -> Optional[float]:
    """A finite-or-not plain number for averaging, or None for values that are not scalars."""
    if isinstance(value, ValWithError):
        return float(value.y)
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and value.size == 1 and np.issubdtype(value.dtype, np.number):
        return float(value.reshape(()))
    return None


@fe_export("fe.summary.summary.average_summaries", "fe.summary.average_summaries")
def average_summaries(name: str, summaries: List[Summary]) -> Summary:
    """Average several runs' summaries: each (mode, key, step) recorded by more than one of them becomes
    `ValWithError(mean - std, mean, mean + std)` (population std); one recorded by a single run keeps its value.

    Non-scalar values (arrays such as confusion matrices) are kept from the first summary that has them.

    Args:
        name: The new summary's name.
        summaries: The summaries to average.

    Returns:
        A new Summary.

    Raises:
        ValueError: If `summaries` is empty.

    Example:
        >>> a, b = Summary("a"), Summary("b")
        >>> a.history["eval"]["acc"][10] = 0.5; b.history["eval"]["acc"][10] = 0.7
        >>> average_summaries("ab", [a, b]).history["eval"]["acc"][10]
        ValWithError(y_min=0.5, y=0.6, y_max=0.7)
    """
    if not summaries:
        raise ValueError("average_summaries needs at least one summary")
    collected: Dict[str, Dict[str, Dict[int, List[Any]]]] = {}
    for summary in summaries:
        for mode, keys in summary.history.items():
            for key, steps in keys.items():
                for step, value in steps.items():
                    collected.setdefault(mode, {}).setdefault(key, {}).setdefault(step, []).append(value)
    result = Summary(name)
    for mode, keys in collected.items():
        for key, steps in keys.items():
            for step, values in sorted(steps.items()):
                numbers = [_number(value) for value in values]
                if len(values) == 1 or any(number is None for number in numbers):
                    result.history[mode][key][step] = values[0]
                    continue
                mean = math.fsum(numbers) / len(numbers)  # type: ignore[arg-type]
                std = float(np.std(np.array(numbers, dtype=float)))
                result.history[mode][key][step] = ValWithError(mean - std, mean, mean + std)
    return result
