"""`GridSearch`: evaluate every combination of a few hyperparameters' values."""
from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, List, Optional, Union

from fe_core.export import fe_export
from fe_core.search.search import Search, SearchError, _check_best_mode

__all__ = ["GridSearch"]


@fe_export("fe.search.grid_search.GridSearch", "fe.search.GridSearch")
class GridSearch(Search):
    """Evaluate `eval_fn` on every combination of the given parameter values (the first parameter varies slowest).

    ```python
    search = GridSearch(eval_fn=lambda search_idx, a, b: a + b, params={"a": [1, 2, 3], "b": [4, 5, 6]})
    search.fit()
    search.get_best_results()  # {'param': {'a': 3, 'b': 6, 'search_idx': 9}, 'result': {'value': 9}}

    search = GridSearch(eval_fn=lambda search_idx, a, b: {"sum": a + b}, params={"a": [1, 2, 3], "b": [4, 5, 6]})
    search.fit()
    search.get_best_results()  # {'param': {'a': 3, 'b': 6, 'search_idx': 9}, 'result': {'sum': 9}}
    ```

    Args:
        eval_fn: The function to evaluate; it takes `search_idx` and the parameters by name, and returns a dict of
            results or one value (stored as `{'value': result}`).
        params: `{argument name: [values to try]}`; every name must be an argument of `eval_fn`.
        best_mode: 'min' or 'max', used by `get_best_results` (None: 'max' unless given there).
        optimize_field: The result field that decides the best (needed when results have several fields).
        name: The search's name (`save` writes `<name>.json`).
        seed: Seed each trial with `trial_seed(seed, search_idx)` (None: no seeding, as in FastEstimator).

    On `fit(save_dir, executor=fe.search.Ray(...))` every combination is submitted at once and runs in parallel up
    to the cluster's resources; the results and their `search_idx` are the same as in a serial search.

    Raises:
        AssertionError: If `params` is not a dict of non-empty lists, names an argument `eval_fn` lacks, or
            `best_mode` is invalid (a `SearchError`, which is also a ValueError).
    """

    def __init__(self,
                 eval_fn: Callable[..., Union[Dict[str, Any], float]],
                 params: Dict[str, List],
                 best_mode: Optional[str] = None,
                 optimize_field: Optional[str] = None,
                 name: str = "grid_search",
                 seed: Optional[int] = None) -> None:
        super().__init__(eval_fn=eval_fn, name=name, seed=seed)
        if not isinstance(params, dict) or not params:
            raise SearchError(f"GridSearch params must be a non-empty dict of {{name: [values]}}, got {params!r}")
        accepts_kwargs = any(parameter.kind == parameter.VAR_KEYWORD
                             for parameter in _signature_parameters(eval_fn))
        for key, values in params.items():
            if key == "search_idx":
                raise SearchError("GridSearch params cannot contain 'search_idx': the search fills it in")
            if not accepts_kwargs and key not in self._eval_args:
                raise SearchError(f"GridSearch params key {key!r} is not an argument of eval_fn (its arguments: "
                                  f"{self._eval_args})")
            if not isinstance(values, (list, tuple)) or not values:
                raise SearchError(f"GridSearch params[{key!r}] must be a non-empty list of values, got {values!r}")
        _check_best_mode(best_mode, allow_none=True)
        self.params = {key: list(values) for key, values in params.items()}
        self.best_mode = best_mode
        self.optimize_field = optimize_field

    def _fit(self) -> None:
        keys = list(self.params)
        self._evaluate_batch([dict(zip(keys, values))
                              for values in itertools.product(*(self.params[key] for key in keys))])


def _signature_parameters(function: Callable[..., Any]) -> List[Any]:
    import inspect  # pylint: disable=import-outside-toplevel
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return []
