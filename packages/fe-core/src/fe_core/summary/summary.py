"""`Summary`: the history of a run, `history[mode][key][step] = value`, and `ValWithError`."""
from __future__ import annotations

from collections import defaultdict
import math
import re
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
    """Average multiple summaries together, storing their metric means +- stdevs, as FastEstimator does.

    For each (mode, key, step) the runs' numbers are combined: one value (or several equal ones) is kept as it is,
    different ones become `ValWithError(mean - std, mean, mean + std)` with the sample standard deviation. A
    `ValWithError` counts as its middle value, a string as the one number it holds; other values (arrays such as
    confusion matrices, text) and the 'epoch' key are left out. Test values, which early stopping can put at
    different steps in different runs, are pooled into one entry at the largest test step.

    Args:
        name: The name for the new summary.
        summaries: The summaries to average. None gives an empty Summary; one is renamed and returned.

    Returns:
        A single summary object reporting mean+-stddev for each metric.

    Example:
        >>> a, b = Summary("a"), Summary("b")
        >>> a.history["eval"]["acc"][10] = 0.5; b.history["eval"]["acc"][10] = 0.7
        >>> value = average_summaries("ab", [a, b]).history["eval"]["acc"][10]
        >>> round(value.y, 6), round(value.y_max - value.y, 6)
        (0.6, 0.141421)
    """
    if not summaries:
        return Summary(name)
    if len(summaries) == 1:
        summaries[0].name = name
        return summaries[0]
    collected: Dict[str, Dict[str, Dict[int, List[float]]]] = {}
    for summary in summaries:
        for mode, keys in summary.history.items():
            for key, steps in keys.items():
                if key == "epoch":  # averaging epochs over runs means nothing
                    continue
                for step, value in steps.items():
                    number = _averageable(value)
                    per_step = collected.setdefault(mode, {}).setdefault(key, {}).setdefault(step, [])
                    if number is not None:
                        per_step.append(number)
    result = Summary(name)
    for mode, keys in collected.items():
        for key, steps in keys.items():
            if mode == "test" and steps:  # pooled at the largest step
                steps = {max(steps): [value for values in steps.values() for value in values]}
            for step, values in sorted(steps.items()):
                reduced = _reduce_values(values)
                if reduced is not None:
                    result.history[mode][key][step] = reduced
    return result


def _averageable(value: Any) -> Optional[float]:
    """The number `average_summaries` averages for a recorded value (None: the value is left out)."""
    if isinstance(value, str):
        found = re.findall(r"(\d+\.\d+|\.?\d+)", value)
        return float(found[0]) if len(found) == 1 else None
    return _number(value)


def _reduce_values(values: List[float]) -> Any:
    """None for no values, the value when all are equal, else mean +- the sample standard deviation."""
    if not values:
        return None
    if all(value == values[0] for value in values):
        return values[0]
    mean = math.fsum(values) / len(values)
    std = float(np.std(np.asarray(values, dtype=float), ddof=1))
    return ValWithError(mean - std, mean, mean + std)
