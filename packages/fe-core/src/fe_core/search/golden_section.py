"""`GoldenSection`: golden-section search for the best value of one (unimodal) hyperparameter."""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Union

from fe_core.export import fe_export
from fe_core.search.search import Search, SearchError, _check_best_mode, result_value

__all__ = ["GoldenSection"]

_INV_PHI = (math.sqrt(5) - 1) / 2  # 0.618...
_INV_PHI2 = 1 - _INV_PHI  # 0.382...


@fe_export("fe.search.golden_section.GoldenSection", "fe.search.GoldenSection")
class GoldenSection(Search):
    """Find the minimum or maximum of a unimodal function of one variable by golden-section search.

    Two points inside [x_min, x_max] are evaluated first; each iteration then drops the part of the range beyond the
    worse point and evaluates one new point, so the range shrinks by 0.618 per iteration (range at iteration i:
    0.618**i * (x_max - x_min)). With `integer`, points are rounded to integers, points already evaluated are not
    evaluated again, and the search stops once the range holds no new integer.

    ```python
    search = GoldenSection(eval_fn=lambda search_idx, n: (n - 3)**2, x_min=0, x_max=6, max_iter=10, best_mode="min")
    search.fit()
    search.get_best_results()  # {'param': {'n': 3, 'search_idx': ...}, 'result': {'value': 0}}
    ```

    Args:
        eval_fn: The function to evaluate: it takes `search_idx` and exactly one other argument, the variable.
        x_min: Lower limit (inclusive) of the search range.
        x_max: Upper limit (inclusive) of the search range.
        max_iter: The most iterations to run (after the first two evaluations).
        best_mode: 'min' or 'max'.
        optimize_field: The result field to optimize (needed when results have several fields).
        integer: Whether the variable is an integer.
        name: The search's name (`save` writes `<name>.json`).
        seed: Seed each trial with `trial_seed(seed, search_idx)` (None: no seeding, as in FastEstimator).

    On `fit(save_dir, executor=fe.search.Ray(...))` the two starting points run at once; each later iteration
    depends on the previous one, so it evaluates its one new point alone.

    Raises:
        AssertionError: If `eval_fn`, `x_min`, `x_max`, `max_iter` or `best_mode` are invalid (a `SearchError`, which
            is also a ValueError).
    """

    def __init__(self,
                 eval_fn: Callable[[int, Union[int, float]], float],
                 x_min: Union[int, float],
                 x_max: Union[int, float],
                 max_iter: int,
                 best_mode: str,
                 optimize_field: Optional[str] = None,
                 integer: bool = True,
                 name: str = "golden_section_search",
                 seed: Optional[int] = None) -> None:
        super().__init__(eval_fn=eval_fn, name=name, seed=seed)
        variables = [arg for arg in self._eval_args if arg != "search_idx"]
        if len(variables) != 1:
            raise SearchError(f"GoldenSection eval_fn must take 'search_idx' and exactly one other argument (the "
                              f"variable), but its arguments are {self._eval_args}")
        for label, value in (("x_min", x_min), ("x_max", x_max)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SearchError(f"GoldenSection {label} must be a finite number, got {value!r}")
        if x_max <= x_min:
            raise SearchError(f"GoldenSection needs x_min < x_max, got x_min={x_min!r}, x_max={x_max!r}")
        if integer and (x_min != int(x_min) or x_max != int(x_max)):
            raise SearchError(f"GoldenSection with integer=True needs integer limits, got {x_min!r} and {x_max!r}")
        if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 0:
            raise SearchError(f"GoldenSection max_iter must be a non-negative integer, got {max_iter!r}")
        _check_best_mode(best_mode)
        self.variable = variables[0]
        self.x_min = x_min
        self.x_max = x_max
        self.max_iter = max_iter
        self.best_mode = best_mode
        self.optimize_field = optimize_field
        self.integer = integer

    def _point(self, x: float) -> Union[int, float]:
        return int(round(x)) if self.integer else x

    def _score(self, x: Union[int, float]) -> float:
        return self._value(x, self._evaluate_batch([{self.variable: x}])[0])

    def _value(self, x: Union[int, float], result: Optional[Dict[str, Any]]) -> float:
        """The score of `x` (lower is better) from its result."""
        if result is None:
            raise SearchError(f"GoldenSection: the trial at {self.variable}={x} failed (see get_failed_trials()); "
                              f"the search cannot choose its next point without it")
        value = result_value(result, self.optimize_field)
        return value if self.best_mode == "min" else -value  # lower is better

    def _exhausted(self, low: float, high: float) -> bool:
        """Whether (for an integer variable) every integer in [low, high] has been evaluated."""
        if not self.integer or high - low > 3:
            return False
        seen = {entry["param"].get(self.variable) for entry in self.search_summary}
        return all(x in seen for x in range(math.ceil(low), math.floor(high) + 1))

    def _fit(self) -> None:
        low, high = float(self.x_min), float(self.x_max)
        x1 = self._point(low + _INV_PHI2 * (high - low))
        x2 = self._point(low + _INV_PHI * (high - low))
        r1, r2 = self._evaluate_batch([{self.variable: x1}, {self.variable: x2}])
        s1, s2 = self._value(x1, r1), self._value(x2, r2)
        for _ in range(self.max_iter):
            if s1 <= s2:  # the optimum is not above x2: keep [low, x2]
                high, x2, s2 = x2, x1, s1
                x1 = self._point(low + _INV_PHI2 * (high - low))
                if self.integer and x1 >= x2:
                    x1 = x2 - 1
                if x1 < low:
                    break
                s1 = self._score(x1)
            else:  # the optimum is not below x1: keep [x1, high]
                low, x1, s1 = x1, x2, s2
                x2 = self._point(low + _INV_PHI * (high - low))
                if self.integer and x2 <= x1:
                    x2 = x1 + 1
                if x2 > high:
                    break
                s2 = self._score(x2)
            if self._exhausted(low, high):
                break
