"""`OptunaSearch`: a search driven by an Optuna study (TPE by default, any sampler), with pruning of bad trials."""
from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.search.executor import PendingTrial, trial_log_path
from fe_core.search.search import Search, SearchError, _check_best_mode, result_value, to_plain
from fe_core.search.space import to_distribution
from fe_core.search.trial import TrialOutcome, trial_seed

__all__ = ["OptunaSearch"]

_RESULT_ATTR, _ERROR_ATTR, _EPOCHS_ATTR = "fe_result", "fe_error", "fe_reports"


def _optuna() -> Any:
    return import_optional("optuna", extra="search", feature="fe.search.OptunaSearch")


@fe_export("fe.search.optuna_search.OptunaSearch", "fe.search.OptunaSearch")
class OptunaSearch(Search):
    """Search with an Optuna study: a sampler (TPE by default) proposes each trial's parameters from the results so
    far, and a pruner stops trials whose intermediate results are poor (with the `OptunaPruning` trace).

    ```python
    def eval_fn(search_idx, lr, units):
        est = fe.Estimator(pipeline=..., network=make_network(lr, units), epochs=10,
                           traces=[fe.search.OptunaPruning(metric="accuracy")])
        est.fit()
        return {"accuracy": ...}

    search = fe.search.OptunaSearch(eval_fn, params={"lr": fe.search.LogRange(1e-4, 1e-1),
                                                     "units": fe.search.Choice([32, 64, 128])},
                                    n_trials=20, best_mode="max", optimize_field="accuracy", seed=0)
    search.fit("search_dir")  # the study is in search_dir/optuna_search.db; run it again to resume
    search.fit("search_dir", executor=fe.search.Ray())  # or in parallel on Ray
    ```

    Trial `search_idx` is Optuna's trial number + 1. With a seed, trial k's sampler is seeded with
    `trial_seed(seed, k)` and trials are asked in batches of the executor's concurrency (1 serially), so a search is
    repeatable and a resumed search proposes what an uninterrupted one would. Pruned trials are in
    `get_pruned_trials()`, failed ones in `get_failed_trials()` (a resumed study does not run them again; the trials
    that were running when the search was interrupted run again).

    Args:
        eval_fn: The function to evaluate; it takes `search_idx` and the parameters by name, and returns a dict of
            results or one value.
        params: `{argument name: space}`, each space a `Range`, `LogRange`, `Choice` (or a list, taken as a Choice).
        n_trials: How many trials the study holds when the search ends (earlier runs' trials count).
        best_mode: 'min' or 'max': the study's direction.
        optimize_field: The result field the study optimizes (needed when results have several fields).
        sampler: None (TPE), an Optuna sampler class or a function of `seed` that makes one (seeded per trial:
            repeatable), or a sampler instance (used as it is: not repeatable across resumes or executors).
        pruner: An Optuna pruner (None: Optuna's MedianPruner).
        storage: Where the study lives: None (`sqlite:///<save_dir>/<name>.db` when `fit` has a save_dir, in memory
            otherwise) or an RDB URL (`postgresql://...`, for trials on several machines).
        name: The search's name: the study's name, and `save` writes `<name>.json`.
        seed: The search's seed: trial seeds and sampler seeds derive from it and `search_idx`.

    Raises:
        AssertionError: If the arguments are invalid (a `SearchError`, which is also a ValueError).
        MissingExtraError: At `fit` without Optuna installed (a one-line ImportError naming `fe-core[search]`).
    """

    def __init__(self,
                 eval_fn: Callable[..., Union[Dict[str, Any], float]],
                 params: Dict[str, Any],
                 n_trials: int,
                 best_mode: str,
                 optimize_field: Optional[str] = None,
                 sampler: Any = None,
                 pruner: Any = None,
                 storage: Optional[str] = None,
                 name: str = "optuna_search",
                 seed: Optional[int] = None) -> None:
        super().__init__(eval_fn=eval_fn, name=name, seed=seed)
        if not isinstance(params, dict) or not params:
            raise SearchError(f"OptunaSearch params must be a non-empty dict of {{name: space}}, got {params!r}")
        accepts_kwargs = any(parameter.kind == parameter.VAR_KEYWORD
                             for parameter in inspect.signature(eval_fn).parameters.values())
        for key in params:
            if key == "search_idx" or (not accepts_kwargs and key not in self._eval_args):
                raise SearchError(f"OptunaSearch params key {key!r} is not a parameter of eval_fn (its arguments: "
                                  f"{self._eval_args})")
        if isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1:
            raise SearchError(f"OptunaSearch n_trials must be a positive integer, got {n_trials!r}")
        _check_best_mode(best_mode)
        self.params = dict(params)
        self.n_trials = n_trials
        self.best_mode = best_mode
        self.optimize_field = optimize_field
        self.sampler = sampler
        self.pruner = pruner
        self.storage = storage
        self.study: Any = None

    # ------------------------------------------------------------------ the study
    def _storage_url(self) -> Optional[str]:
        if self.storage is not None:
            return self.storage
        if self.save_dir is None:
            return None
        os.makedirs(self.save_dir, exist_ok=True)
        return "sqlite:///" + os.path.abspath(os.path.join(self.save_dir, f"{self.name}.db"))

    def _make_sampler(self, search_idx: int) -> Any:
        optuna = _optuna()
        if isinstance(self.sampler, optuna.samplers.BaseSampler):
            return self.sampler
        factory = self.sampler or optuna.samplers.TPESampler
        return factory(seed=None if self.seed is None else trial_seed(self.seed, search_idx))

    def _value(self, result: Dict[str, Any]) -> float:
        return result_value(result, self.optimize_field)

    def _finish(self, outcome: TrialOutcome, number: int) -> None:
        """Tell the study how trial `number` ended (its result and reports kept as user attributes)."""
        optuna = _optuna()
        study, trial_id = self.study, self._trial_ids[number]
        storage = study._storage  # pylint: disable=protected-access
        if not outcome.reports:  # eval_fn reported without OptunaPruning: what the study holds
            outcome.reports = sorted(storage.get_trial(trial_id).intermediate_values.items())
        storage.set_trial_user_attr(trial_id, _EPOCHS_ATTR, [list(report) for report in outcome.reports])
        state, values = optuna.trial.TrialState.FAIL, None
        if outcome.status == "failed":
            storage.set_trial_user_attr(trial_id, _ERROR_ATTR, outcome.error)
        else:
            result = self.process_results(outcome.result)
            storage.set_trial_user_attr(trial_id, _RESULT_ATTR, result)
            if outcome.status == "pruned":
                state = optuna.trial.TrialState.PRUNED
            else:
                try:
                    values, state = self._value(result), optuna.trial.TrialState.COMPLETE
                except SearchError as error:  # no value to optimize: the trial cannot count
                    outcome.status, outcome.error = "failed", f"SearchError: {error}"
                    storage.set_trial_user_attr(trial_id, _ERROR_ATTR, outcome.error)
        try:
            study.tell(number, values, state=state, skip_if_finished=True)
        except RuntimeError as error:  # a sampler that has run out (GridSampler) calls study.stop(): the study ends
            if "Study.stop" not in str(error):
                raise
            self._sampler_done = True
        self._rebuild(outcome)

    def _rebuild(self, outcome: Optional[TrialOutcome] = None) -> None:
        """The search summary and the pruned / failed lists from the study (and save them when there is a save_dir)."""
        optuna = _optuna()
        states = optuna.trial.TrialState
        summary, pruned, failed = [], [], []
        for trial in self.study.get_trials(deepcopy=False):
            param = {**to_plain(trial.params), "search_idx": trial.number + 1}
            attrs = trial.user_attrs
            if trial.state == states.COMPLETE:
                summary.append({"param": param, "result": attrs.get(_RESULT_ATTR, {"value": trial.value})})
            elif trial.state == states.PRUNED:
                pruned.append({"param": param, "result": attrs.get(_RESULT_ATTR, {}),
                               "epochs": len(attrs.get(_EPOCHS_ATTR, []))})
            elif trial.state == states.FAIL:
                failed.append({"param": param, "error": attrs.get(_ERROR_ATTR),
                               "log": trial_log_path(self.save_dir, self.name, trial.number + 1)
                               if self._executor is not None and self._executor.parallel else None})
        self.search_summary, self.pruned_trials, self.failed_trials = summary, pruned, failed
        self.search_idx = len(self.study.get_trials(deepcopy=False))
        if outcome is not None:
            shown = to_plain(outcome.params)
            if outcome.status == "completed":
                print(f"FastEstimator-Search: Evaluated {shown}, result: {self.process_results(outcome.result)}")
            elif outcome.status == "pruned":
                print(f"FastEstimator-Search: Pruned {shown} after {len(outcome.reports)} report(s)")
            else:
                print(f"FastEstimator-Search: Trial {outcome.search_idx} {shown} failed: {outcome.error}")
        if self.save_dir is not None:
            self.save(self.save_dir)

    # ------------------------------------------------------------------ running
    def _fit(self) -> None:
        optuna = _optuna()
        verbosity = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # fe prints each trial's end itself
        try:
            self._fit_study(optuna)
        finally:
            optuna.logging.set_verbosity(verbosity)

    def _fit_study(self, optuna: Any) -> None:
        storage = self._storage_url()
        executor = self._executor
        parallel = executor is not None and executor.parallel
        if parallel and storage is None:
            raise SearchError("OptunaSearch on Ray needs a study its trials can reach: fit(save_dir) (a SQLite file "
                              "there) or OptunaSearch(storage='<RDB URL>')")
        distributions = {key: to_distribution(space, key) for key, space in self.params.items()}
        self.study = optuna.create_study(study_name=self.name, storage=storage, load_if_exists=True,
                                         direction="minimize" if self.best_mode == "min" else "maximize",
                                         sampler=self._make_sampler(1), pruner=self.pruner)
        self._trial_ids: Dict[int, int] = {}
        self._sampler_done = False
        batch_size = executor.concurrency() if executor is not None else 1
        catch = executor is not None and not executor.stop_on_error
        while True:
            trials = self.study.get_trials(deepcopy=False)
            self._trial_ids.update({trial.number: trial._trial_id for trial in trials})  # pylint: disable=W0212
            running = [trial for trial in trials if trial.state == optuna.trial.TrialState.RUNNING]
            if not running and (len(trials) >= self.n_trials or self._sampler_done):
                break
            # a batch is trials [b * size, (b + 1) * size): resume the ones an interrupted run left running, then ask
            first = min([trial.number for trial in running] + [len(trials)])
            end = min(self.n_trials, (first // batch_size + 1) * batch_size)
            batch: List[Tuple[int, Dict[str, Any], Any]] = [(trial.number, dict(trial.params), None)
                                                            for trial in running]
            for number in range(len(trials), max(end, len(trials))):
                self.study.sampler = self._make_sampler(number + 1)
                trial = self.study.ask(distributions)
                self._trial_ids[trial.number] = trial._trial_id  # pylint: disable=protected-access
                batch.append((trial.number, dict(trial.params), trial))
            self._run_batch(batch, storage, parallel, catch)
        self._rebuild()

    def _run_batch(self, batch: List[Tuple[int, Dict[str, Any], Any]], storage: Optional[str], parallel: bool,
                   catch: bool) -> None:
        optuna = _optuna()
        pending: List[PendingTrial] = []
        for number, params, trial in batch:
            context = self._trial_context(number + 1, params)
            if parallel:
                pending.append((context, (storage, self.name, self._trial_ids[number], self.pruner)))
            else:
                context.optuna_trial = trial or optuna.trial.Trial(self.study, self._trial_ids[number])
                pending.append((context, None))
        if parallel:
            outcomes = self._executor.run(self.eval_fn, pending)
        else:
            from fe_core.search.trial import run_trial  # pylint: disable=import-outside-toplevel
            outcomes = (run_trial(self.eval_fn, context, catch=catch) for context, _ in pending)
        for outcome in outcomes:
            self._finish(outcome, outcome.search_idx - 1)
