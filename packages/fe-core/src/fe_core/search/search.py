"""`Search`: the base of hyperparameter searches: evaluation, caching, best result, and JSON save / resume."""
from __future__ import annotations

import copy
import inspect
import json
import os
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from fe_core.config_error import ConfigurationError
from fe_core.checkpoint.hashed_file import write_hashed_file
from fe_core.export import fe_export
from fe_core.search.executor import PendingTrial, SearchExecutor, trial_log_path
from fe_core.search.trial import TrialContext, TrialOutcome, run_trial, trial_seed

__all__ = ["Search", "SearchError", "MissingSearchError", "to_plain", "read_search_state"]

_STATE_FORMAT = 1


class SearchError(ConfigurationError):
    """A search was set up or queried wrongly (FastEstimator raises AssertionError there; this is both)."""


class MissingSearchError(FileNotFoundError, ValueError):
    """`Search.load` found no saved search (FastEstimator raises ValueError there; this is both)."""


def to_plain(value: Any) -> Any:
    """`value` with numpy arrays as lists and numpy scalars as Python numbers, recursively (JSON-ready)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    return value


def result_value(result: Dict[str, Any], optimize_field: Optional[str]) -> float:
    """The number a search optimizes in one trial's `result`: its `optimize_field`, or its only field."""
    field = optimize_field
    if field is None:
        if len(result) != 1:
            raise SearchError(f"The results have several fields {list(result)}: say which to optimize with "
                              f"optimize_field")
        field = next(iter(result))
    if field not in result:
        raise SearchError(f"optimize_field {field!r} is not in the result {result}")
    return float(result[field])


def _check_best_mode(best_mode: Optional[str], allow_none: bool = False) -> None:
    if best_mode is None and allow_none:
        return
    if best_mode not in ("min", "max"):
        raise SearchError(f"best_mode must be 'min' or 'max', got {best_mode!r}")


@fe_export("fe.search.search.Search", "fe.search.Search")
class Search:
    """The base class of searches: runs `eval_fn`, remembers every evaluation, and saves / resumes them.

    `eval_fn` must take an argument named `search_idx`, which the search fills with the evaluation's number (from 1)
    so that it can name files or logs. It returns a dict of results, or one value (stored as `{'value': result}`).
    Evaluating the same parameters again returns the remembered result without calling `eval_fn`.

    Args:
        eval_fn: The function to evaluate.
        name: The search's name; `save` writes `<name>.json`.
        seed: If given, each trial runs seeded with `trial_seed(seed, search_idx)` (python, numpy and every backend,
            through `enable_deterministic`), so its result does not depend on where or in what order it ran.

    Raises:
        AssertionError: If `eval_fn` has no `search_idx` argument (a `SearchError`, which is also a ValueError).

    Example:
        >>> class Squares(Search):
        ...     def _fit(self):
        ...         for x in range(3):
        ...             self.evaluate(x=x)
        >>> search = Squares(eval_fn=lambda search_idx, x: x * x)
        >>> search.fit()
        >>> search.get_best_results(best_mode="max")
        {'param': {'x': 2, 'search_idx': 3}, 'result': {'value': 4}}
    """

    def __init__(self, eval_fn: Callable[..., Any], name: str = "search", seed: Optional[int] = None) -> None:
        if not callable(eval_fn):
            raise SearchError(f"{type(self).__name__}: eval_fn must be callable, got {type(eval_fn).__name__}")
        self._eval_args = self._parameters(eval_fn)
        if "search_idx" not in self._eval_args:
            raise SearchError(f"{type(self).__name__}: eval_fn must take an argument named 'search_idx', but its "
                              f"arguments are {sorted(self._eval_args)}")
        if not isinstance(name, str) or not name:
            raise SearchError(f"{type(self).__name__}: name must be a non-empty string, got {name!r}")
        self.eval_fn = eval_fn
        self.name = name
        self.search_summary: List[Dict[str, Dict[str, Any]]] = []
        self.search_idx = 0  # the number of the latest evaluation (FastEstimator's counter)
        self.save_dir: Optional[str] = None
        self.best_mode: Optional[str] = None
        self.optimize_field: Optional[str] = None
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise SearchError(f"{type(self).__name__}: seed must be an integer or None, got {seed!r}")
        self.seed = seed
        self.failed_trials: List[Dict[str, Any]] = []
        self.pruned_trials: List[Dict[str, Any]] = []
        self._executor: Optional[SearchExecutor] = None
        self._planned: Dict[str, int] = {}

    @staticmethod
    def _parameters(eval_fn: Callable[..., Any]) -> List[str]:
        try:
            return list(inspect.signature(eval_fn).parameters)
        except (TypeError, ValueError):
            return []

    # ------------------------------------------------------------------ evaluating
    def process_results(self, result: Union[dict, Any]) -> Dict[str, Union[float, int, str, list]]:
        """Make a result storable: numpy arrays become lists, numpy scalars numbers, and a non-dict `{'value': it}`.

        Args:
            result: What `eval_fn` returned.

        Returns:
            The result as a JSON-ready dict.
        """
        if not isinstance(result, dict):
            result = {"value": result}
        return to_plain(result)

    def evaluate(self, **kwargs: Any) -> Dict[str, Union[float, int, str, list]]:
        """Evaluate `eval_fn` on `kwargs` (with the next `search_idx`), or return the result remembered for them.

        Args:
            kwargs: The parameters (without `search_idx`, which is filled in here).

        Returns:
            The result dict (None when the trial failed and the search records failures instead of stopping).

        Raises:
            AssertionError: If `kwargs` contains `search_idx`.
        """
        if "search_idx" in kwargs:
            raise SearchError(f"{type(self).__name__}.evaluate: search_idx is filled in by the search; do not pass it")
        known = self._known(to_plain(kwargs))
        if known is not None:
            return known["result"]
        self.search_idx = max(int(self.search_idx), self._last_search_idx()) + 1
        catch = self._executor is not None and not self._executor.stop_on_error
        outcome = run_trial(self.eval_fn, self._trial_context(self.search_idx, kwargs), catch=catch)
        return self._record(outcome)

    def _known(self, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """The recorded evaluation of `params` (plain values), or None."""
        for entry in self.search_summary:
            if {key: value for key, value in entry["param"].items() if key != "search_idx"} == params:
                return entry
        return None

    def _trial_context(self, search_idx: int, params: Dict[str, Any]) -> TrialContext:
        executor = self._executor
        log_path = trial_log_path(self.save_dir, self.name, search_idx) if executor and executor.parallel else None
        seed = None if self.seed is None else trial_seed(self.seed, search_idx)
        return TrialContext(search_name=self.name, search_idx=search_idx, params=dict(params), seed=seed,
                            log_path=log_path)

    def _record(self, outcome: TrialOutcome) -> Optional[Dict[str, Any]]:
        """Remember a finished trial (and save the search when it has a save_dir); the result, None when it failed."""
        plain = to_plain(outcome.params)
        params = {**plain, "search_idx": outcome.search_idx}
        self.failed_trials = [entry for entry in self.failed_trials  # a failure run again is replaced by its new end
                              if {key: value for key, value in entry["param"].items() if key != "search_idx"} != plain]
        result = None
        if outcome.status == "failed":
            log = trial_log_path(self.save_dir, self.name, outcome.search_idx) if (
                self._executor is not None and self._executor.parallel) else None
            self.failed_trials.append({"param": params, "error": outcome.error, "log": log})
            print(f"FastEstimator-Search: Trial {outcome.search_idx} {to_plain(outcome.params)} failed: "
                  f"{outcome.error}")
        else:
            result = self.process_results(outcome.result)
            if outcome.status == "pruned":
                self.pruned_trials.append({"param": params, "result": result, "epochs": len(outcome.reports)})
                print(f"FastEstimator-Search: Pruned {to_plain(outcome.params)} after {len(outcome.reports)} "
                      f"report(s)")
            else:
                self.search_summary.append({"param": params, "result": result})
                if self._executor is not None and self._executor.parallel:  # trials end in any order: keep search_idx's
                    self.search_summary.sort(key=lambda entry: int(entry["param"].get("search_idx", 0)))
                print(f"FastEstimator-Search: Evaluated {to_plain(outcome.params)}, result: {result}")
        if self.save_dir is not None:
            self.save(self.save_dir)
        return result

    def _evaluate_batch(self, batch: List[Dict[str, Any]]) -> List[Optional[Dict[str, Any]]]:
        """Evaluate several parameter sets that the search's method allows to run at once; their results in order.

        One after another (exactly `evaluate` on each) unless the executor runs trials in parallel. In parallel, the
        k-th distinct parameter set a fit asks for is trial k whatever finishes first, so a resumed search gives its
        trials the numbers an uninterrupted one gives them.
        """
        executor = self._executor
        if executor is None or not executor.parallel:
            return [self.evaluate(**params) for params in batch]
        pending: List[PendingTrial] = []
        for params in batch:
            if "search_idx" in params:
                raise SearchError(f"{type(self).__name__}: search_idx is filled in by the search; do not pass it")
            key = json.dumps(to_plain(params), sort_keys=True)
            if key not in self._planned:
                self._planned[key] = len(self._planned) + 1
                if self._known(to_plain(params)) is None:
                    pending.append((self._trial_context(self._planned[key], params), None))
        for outcome in executor.run(self.eval_fn, pending):
            self._record(outcome)
        self.search_idx = max(int(self.search_idx), self._last_search_idx())
        results = []
        for params in batch:
            known = self._known(to_plain(params))
            results.append(None if known is None else known["result"])
        return results

    def _last_search_idx(self) -> int:
        """The highest `search_idx` among the recorded evaluations (0 when there are none)."""
        return max((int(entry["param"].get("search_idx", 0)) for entry in self.search_summary), default=0)

    # ------------------------------------------------------------------ results
    def _optimize_field(self, optimize_field: Optional[str]) -> str:
        field = optimize_field or self.optimize_field
        if not self.search_summary:
            raise SearchError(f"{type(self).__name__} {self.name!r} has no results yet: call fit() first")
        keys = list(self.search_summary[0]["result"])
        if field is None:
            if len(keys) != 1:
                raise SearchError(f"The results have several fields {keys}: say which to optimize with optimize_field")
            return keys[0]
        if any(field not in entry["result"] for entry in self.search_summary):
            raise SearchError(f"optimize_field {field!r} is not in every result (result fields: {keys})")
        return field

    def get_best_results(self, best_mode: Optional[str] = None,
                         optimize_field: Optional[str] = None) -> Dict[str, Dict[str, Any]]:
        """The best evaluation so far (the first one, among equals).

        Args:
            best_mode: 'min' or 'max' (default: the search's own, else 'max').
            optimize_field: The result field to compare (needed when results have several fields; default: the
                search's own).

        Returns:
            `{"param": {..., "search_idx": i}, "result": {...}}` (a copy).

        Raises:
            AssertionError: If there are no results, `best_mode` is invalid, or the field is ambiguous or missing.
        """
        mode = best_mode or self.best_mode or "max"
        _check_best_mode(mode)
        field = self._optimize_field(optimize_field)
        sign = 1.0 if mode == "max" else -1.0
        best = max(self.search_summary, key=lambda entry: sign * float(entry["result"][field]))
        return copy.deepcopy(best)

    def get_search_summary(self) -> List[Dict[str, Dict[str, Any]]]:
        """Every evaluation so far, in order: a list of `{"param": {...}, "result": {...}}` (a copy)."""
        return copy.deepcopy(self.search_summary)

    def get_failed_trials(self) -> List[Dict[str, Any]]:
        """The trials that failed (when the executor records failures): `{"param": {...}, "error": "Type: message",
        "log": path or None}` each (a copy). They are not in the search summary, and a resumed search runs them again.
        """
        return copy.deepcopy(self.failed_trials)

    def get_pruned_trials(self) -> List[Dict[str, Any]]:
        """The trials that were pruned (stopped early by OptunaPruning): `{"param": {...}, "result": {...},
        "epochs": reports made}` each (a copy). They are not in the search summary.
        """
        return copy.deepcopy(self.pruned_trials)

    # ------------------------------------------------------------------ saving
    def _state(self) -> Dict[str, Any]:
        return {"format": _STATE_FORMAT, "name": self.name, "search_class": type(self).__name__,
                "best_mode": self.best_mode, "optimize_field": self.optimize_field,
                "search_summary": self.search_summary, "failed_trials": self.failed_trials,
                "pruned_trials": self.pruned_trials}

    def save(self, save_dir: str) -> None:
        """Write the search state to `<save_dir>/<name>.json` (atomically: a crash leaves the previous file).

        Args:
            save_dir: The folder (created if needed).
        """
        os.makedirs(save_dir, exist_ok=True)
        path = os.path.join(save_dir, f"{self.name}.json")
        write_hashed_file(path, lambda file: file.write(json.dumps(self._state(), indent=2).encode("utf-8")))

    def load(self, load_dir: str, not_exist_ok: bool = False) -> None:
        """Read the search state from `<load_dir>/<name>.json` (replacing the evaluations in memory).

        Args:
            load_dir: The folder.
            not_exist_ok: Do nothing when the file does not exist (instead of raising).

        Raises:
            FileNotFoundError: If the file does not exist and `not_exist_ok` is False (a `MissingSearchError`, also
                the ValueError FastEstimator raises).
            ValueError: If the file is not a search state.
        """
        path = os.path.join(load_dir, f"{self.name}.json")
        if not os.path.exists(path):
            if not_exist_ok:
                return
            raise MissingSearchError(f"No saved search {self.name!r} in {load_dir!r} (looked for {path})")
        state = read_search_state(path)
        self.search_summary = state["search_summary"]
        self.failed_trials = list(state.get("failed_trials") or [])
        self.pruned_trials = list(state.get("pruned_trials") or [])
        self.search_idx = self._last_search_idx()
        print(f"FastEstimator-Search: Loaded {len(self.search_summary)} evaluation(s) of {self.name!r} from {path}")

    # ------------------------------------------------------------------ running
    def fit(self, save_dir: Optional[str] = None, executor: Optional[SearchExecutor] = None) -> None:
        """Run the search.

        Args:
            save_dir: If given, resume from `<save_dir>/<name>.json` when it exists, and save there after every
                evaluation, so an interrupted search continues where it stopped when run again: finished trials are
                not run again, trials that were running (or failed) are.
            executor: Where the trials run: None or `Serial()` runs them one after another in this process (as
                FastEstimator does); `Ray(...)` runs them in parallel on Ray, each trial's output going to
                `<save_dir>/<name>_trials/trial_<search_idx>.log`. The results are the same either way.
        """
        if executor is not None and not isinstance(executor, SearchExecutor):
            raise SearchError(f"{type(self).__name__}.fit: executor must be fe.search.Serial(...) or "
                              f"fe.search.Ray(...), got {executor!r}")
        self.save_dir = save_dir
        if save_dir is not None:
            self.load(save_dir, not_exist_ok=True)
        if executor is not None:
            executor.start()
        self._executor = executor
        self._planned = {}
        try:
            self._fit()
        finally:
            self.save_dir = None
            self._executor = None

    def _fit(self) -> None:
        """The search strategy: subclasses call `self.evaluate(**params)`."""
        raise NotImplementedError


def read_search_state(path: str) -> Dict[str, Any]:
    """Read a saved search JSON file (as written by `Search.save`, or FastEstimator's `{'search_summary': [...]}`).

    Raises:
        ValueError: If the file is not a search state.
    """
    with open(path, encoding="utf-8") as file:
        try:
            state = json.load(file)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not a saved search (invalid JSON: {error})") from None
    summary = state.get("search_summary") if isinstance(state, dict) else None
    if not isinstance(summary, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("param"), dict) and isinstance(entry.get("result"), dict)
            for entry in summary):
        raise ValueError(f"{path} is not a saved search: it needs a 'search_summary' list of "
                         f"{{'param': {{...}}, 'result': {{...}}}} entries")
    return state
