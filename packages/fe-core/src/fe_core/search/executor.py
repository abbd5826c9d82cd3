"""Where a search's trials run: `Serial` (one after another, in this process) or `Ray` (in parallel on Ray).

A search hands its executor a batch of trials it may run at once (GridSearch: the whole grid; GoldenSection: the
points its method allows; OptunaSearch: as many as the executor runs at once) and gets each trial's outcome back as it
finishes. Ray is an optional extra (`fe-core[search]`), imported only when a `Ray` executor starts.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

from fe_core.config_error import ConfigurationError
from fe_core.export import fe_export
from fe_core.optional import import_optional
from fe_core.search.trial import TrialContext, TrialOutcome, run_trial

__all__ = ["SearchExecutor", "Serial", "Ray", "TrialError", "PendingTrial"]

# (the trial's context, how to reach its Optuna trial from another process: (storage URL, study name, trial id,
# pruner) or None)
PendingTrial = Tuple[TrialContext, Optional[Tuple[str, str, int, Any]]]


def attach_trial(storage: str, study_name: str, trial_id: int, pruner: Any) -> Any:
    """The Optuna trial `trial_id` of a study in `storage`, seen from another process (a Ray worker)."""
    optuna = import_optional("optuna", extra="search", feature="fe.search.OptunaSearch")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=study_name, storage=storage, pruner=pruner)
    return optuna.trial.Trial(study, trial_id)


class TrialError(RuntimeError):
    """A trial failed and the executor was told to stop the search on a failure (`stop_on_error=True`)."""


class SearchExecutor:
    """The base of executors: runs batches of trials and yields their outcomes as they finish.

    Args:
        stop_on_error: Stop the search at the first failing trial (raising its error) instead of recording the failure
            and going on.
    """

    def __init__(self, stop_on_error: bool) -> None:
        self.stop_on_error = bool(stop_on_error)

    @property
    def parallel(self) -> bool:
        """Whether trials run in other processes (so they need a study storage they can reach, a log file...)."""
        return False

    def start(self) -> None:
        """Prepare to run trials (connect to a cluster, ...)."""

    def concurrency(self) -> int:
        """How many trials run at once."""
        return 1

    def run(self, eval_fn: Callable[..., Any], trials: Sequence[PendingTrial]) -> Iterator[TrialOutcome]:
        """Run `trials` and yield their outcomes as they finish."""
        raise NotImplementedError


@fe_export("fe.search.Serial")
class Serial(SearchExecutor):
    """Run trials one after another in this process (the default; what FastEstimator does).

    Args:
        stop_on_error: Let a failing `eval_fn`'s exception end the search (the default, as in FastEstimator); False
            records the failure (see `Search.get_failed_trials`) and goes on.
    """

    def __init__(self, stop_on_error: bool = True) -> None:
        super().__init__(stop_on_error=stop_on_error)

    def run(self, eval_fn: Callable[..., Any], trials: Sequence[PendingTrial]) -> Iterator[TrialOutcome]:
        for context, _ in trials:
            yield run_trial(eval_fn, context, catch=not self.stop_on_error)


def _ray_trial(eval_fn: Callable[..., Any], context: TrialContext, optuna_ref: Optional[Tuple[str, str, int, Any]]
               ) -> TrialOutcome:
    """A trial as a Ray task: reattach its Optuna trial (through the study's storage), then run it."""
    if optuna_ref is not None:
        context.optuna_trial = attach_trial(*optuna_ref)
    return run_trial(eval_fn, context, catch=True)


@fe_export("fe.search.Ray")
class Ray(SearchExecutor):
    """Run trials in parallel as Ray tasks, each with its own resources, on a local Ray or a Ray cluster.

    ```python
    search = fe.search.GridSearch(eval_fn=eval_fn, params={"lr": [1e-3, 1e-2], "units": [32, 64]})
    search.fit("search_dir", executor=fe.search.Ray(resources_per_trial={"cpu": 1, "gpu": 1}))
    ```

    Each trial's output goes to `<save_dir>/<search name>_trials/trial_<search_idx>.log`. A trial that fails is
    recorded with its error (`Search.get_failed_trials`) and the others go on, unless `stop_on_error`.

    Args:
        resources_per_trial: What one trial needs: `{"cpu": 1}` (the default), `{"cpu": 2, "gpu": 1}`, plus any custom
            Ray resource by name. Ray runs as many trials at once as the resources allow.
        address: None starts a local Ray on this machine (or uses the one this process already started with
            `ray.init`); "auto" or "ray://host:10001" or "host:6379" joins an existing cluster.
        num_cpus: The CPUs of a local Ray that this executor starts (None: all of this machine's).
        num_gpus: The GPUs of a local Ray that this executor starts (None: all of this machine's).
        max_concurrent_trials: Run at most this many trials at once (None: as many as the resources allow). It is also
            the size of OptunaSearch's batches, so fix it when an Optuna search must be repeatable on other clusters.
        stop_on_error: Stop the search at the first failing trial (cancelling the others and raising a TrialError).

    Raises:
        MissingExtraError: When a search starts on Ray without Ray installed (a one-line ImportError naming the
            extra `fe-core[search]`).
    """

    def __init__(self,
                 resources_per_trial: Optional[Dict[str, float]] = None,
                 address: Optional[str] = None,
                 num_cpus: Optional[int] = None,
                 num_gpus: Optional[int] = None,
                 max_concurrent_trials: Optional[int] = None,
                 stop_on_error: bool = False) -> None:
        super().__init__(stop_on_error=stop_on_error)
        resources = dict(resources_per_trial) if resources_per_trial is not None else {"cpu": 1}
        for key, value in resources.items():
            if not isinstance(key, str) or isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigurationError(f"Ray resources_per_trial must map resource names to non-negative numbers, "
                                         f"got {resources_per_trial!r}")
        if max_concurrent_trials is not None and (not isinstance(max_concurrent_trials, int) or
                                                  max_concurrent_trials < 1):
            raise ConfigurationError(f"Ray max_concurrent_trials must be a positive integer or None, got "
                                     f"{max_concurrent_trials!r}")
        self.resources_per_trial = resources
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.max_concurrent_trials = max_concurrent_trials
        self._ray: Any = None

    @property
    def parallel(self) -> bool:
        return True

    def start(self) -> None:
        ray = import_optional("ray", extra="search", feature="fe.search.Ray")
        if not ray.is_initialized():
            if self.address is None:
                ray.init(num_cpus=self.num_cpus, num_gpus=self.num_gpus, include_dashboard=False,
                         configure_logging=False)
            else:
                ray.init(address=self.address, configure_logging=False)
        self._ray = ray

    def _task_options(self) -> Dict[str, Any]:
        resources = dict(self.resources_per_trial)
        options: Dict[str, Any] = {"num_cpus": resources.pop("cpu", 0), "num_gpus": resources.pop("gpu", 0),
                                   "max_retries": 0}
        if resources:
            options["resources"] = resources
        return options

    def concurrency(self) -> int:
        if self.max_concurrent_trials is not None:
            return self.max_concurrent_trials
        totals = self._ray.cluster_resources()
        fits = []
        for key, need in self.resources_per_trial.items():
            if need <= 0:
                continue
            have = totals.get({"cpu": "CPU", "gpu": "GPU"}.get(key, key), 0.0)
            fits.append(math.floor(have / need + 1e-9))
        if fits and min(fits) < 1:
            raise ConfigurationError(f"The Ray cluster ({dict(totals)}) cannot hold one trial's resources "
                                     f"{self.resources_per_trial}")
        return max(1, min(fits)) if fits else max(1, int(totals.get("CPU", 1)))

    def run(self, eval_fn: Callable[..., Any], trials: Sequence[PendingTrial]) -> Iterator[TrialOutcome]:
        ray = self._ray
        remote = ray.remote(_ray_trial).options(**self._task_options())
        eval_ref = ray.put(eval_fn)
        waiting = list(trials)
        running: Dict[Any, TrialContext] = {}
        limit = self.concurrency()
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    context, optuna_ref = waiting.pop(0)
                    running[remote.remote(eval_ref, context, optuna_ref)] = context
                done, _ = ray.wait(list(running), num_returns=1)
                context = running.pop(done[0])
                try:
                    outcome = ray.get(done[0])
                except Exception as error:  # pylint: disable=broad-except
                    # the worker died (killed, out of memory) or could not unpickle eval_fn
                    outcome = TrialOutcome(search_idx=context.search_idx, params=dict(context.params),
                                           status="failed", error=f"{type(error).__name__}: {error}".splitlines()[0],
                                           traceback=str(error))
                if outcome.status == "failed" and self.stop_on_error:
                    raise TrialError(f"Trial {outcome.search_idx} ({outcome.params}) failed: {outcome.error}"
                                     + (f" (log: {context.log_path})" if context.log_path else ""))
                yield outcome
        finally:
            for ref in running:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # pylint: disable=broad-except
                    pass


def trial_log_path(save_dir: Optional[str], search_name: str, search_idx: int) -> Optional[str]:
    """Where a parallel trial writes its output: `<save_dir>/<search name>_trials/trial_<search_idx>.log`."""
    if save_dir is None:
        return None
    return os.path.join(save_dir, f"{search_name}_trials", f"trial_{search_idx}.log")
