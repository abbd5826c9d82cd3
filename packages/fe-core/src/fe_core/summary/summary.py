"""`Summary`: the history of a run, `history[mode][key][step] = value`, and `ValWithError`."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, DefaultDict, Dict, NamedTuple, Optional
from fe_core.export import fe_export

__all__ = ["Summary", "ValWithError"]


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
