"""One trial of a search: the context an `eval_fn` runs in (its seed, log file, history tag, Optuna trial).

A trial is an ordinary fe run. While `eval_fn(search_idx=..., **params)` runs, `current_trial()` says which trial it
is (the `OptunaPruning` trace finds its Optuna trial there), the environment variable `FE_SEARCH_TRIAL` names the
search and `search_idx` (fe's run-history database records it as a feature of every fit the trial makes), and, when
the search has a seed, every random number generator is seeded with `trial_seed(seed, search_idx)`, so a trial's
result does not depend on which worker ran it or in what order.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from fe_core.export import fe_export

__all__ = ["TrialContext", "TrialOutcome", "current_trial", "trial_seed", "run_trial", "trial_context",
           "TRIAL_ENV_VAR"]

TRIAL_ENV_VAR = "FE_SEARCH_TRIAL"  # "<search name>:<search_idx>", read by fe_core.summary.history

_current: Optional["TrialContext"] = None


@fe_export("fe.search.TrialContext")
@dataclass
class TrialContext:
    """What a running trial knows about itself (see `current_trial`).

    Attributes:
        search_name: The search's name.
        search_idx: The trial's number in the search (from 1).
        params: The parameters `eval_fn` was called with.
        seed: The trial's seed (None when the search has none).
        log_path: The file that receives the trial's output (None when it prints to the console).
        optuna_trial: The Optuna trial this run reports to (OptunaSearch only).
        reports: `(step, value)` pairs reported to Optuna so far.
        pruned_at: The step at which Optuna pruned the trial (None while it is not pruned).
    """
    search_name: str
    search_idx: int
    params: Dict[str, Any]
    seed: Optional[int] = None
    log_path: Optional[str] = None
    optuna_trial: Any = None
    reports: List[Tuple[int, float]] = field(default_factory=list)
    pruned_at: Optional[int] = None


@dataclass
class TrialOutcome:
    """How a trial ended: status 'completed' (with `result`), 'pruned' (with `result` and `reports`) or 'failed'."""
    search_idx: int
    params: Dict[str, Any]
    status: str
    result: Any = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    reports: List[Tuple[int, float]] = field(default_factory=list)
    seconds: float = 0.0


@fe_export("fe.search.current_trial")
def current_trial() -> Optional[TrialContext]:
    """The trial whose `eval_fn` is running in this process, or None outside a search's trial.

    Example:
        >>> def eval_fn(search_idx, lr):
        ...     trial = current_trial()  # trial.search_idx == search_idx, trial.seed, trial.log_path
        ...     return lr
    """
    return _current


@fe_export("fe.search.trial_seed")
def trial_seed(seed: int, search_idx: int) -> int:
    """The seed of trial `search_idx` of a search seeded with `seed`: a pure function of the two (a 31-bit integer).

    Example:
        >>> trial_seed(0, 1) == trial_seed(0, 1) != trial_seed(0, 2)
        True
    """
    digest = hashlib.sha256(f"fe-search:{int(seed)}:{int(search_idx)}".encode("ascii")).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


@contextlib.contextmanager
def _redirected_output(log_path: Optional[str]) -> Iterator[None]:
    """Send this process's stdout and stderr (Python's and the file descriptors') to `log_path` (appending)."""
    if log_path is None:
        yield
        return
    os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with open(log_path, "a", encoding="utf-8", buffering=1) as log:
        saved_fds = []
        for fd in (1, 2):
            try:
                saved_fds.append((fd, os.dup(fd)))
                os.dup2(log.fileno(), fd)
            except OSError:
                pass
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        try:
            yield
        finally:
            sys.stdout, sys.stderr = old_out, old_err
            log.flush()
            for fd, saved in saved_fds:
                os.dup2(saved, fd)
                os.close(saved)


@contextlib.contextmanager
def trial_context(context: TrialContext) -> Iterator[TrialContext]:
    """Run a block as trial `context`: seeds, `FE_SEARCH_TRIAL`, `current_trial()` and its log file set, then undone."""
    global _current  # pylint: disable=global-statement
    from fe_core import determinism  # pylint: disable=import-outside-toplevel
    previous, previous_env, previous_seed = _current, os.environ.get(TRIAL_ENV_VAR), determinism.deterministic_seed()
    _current = context
    os.environ[TRIAL_ENV_VAR] = f"{context.search_name}:{context.search_idx}"
    try:
        with _redirected_output(context.log_path):
            if context.seed is not None:
                determinism.enable_deterministic(context.seed)
            yield context
    finally:
        determinism._seed = previous_seed  # pylint: disable=protected-access  # the trial's seed ends with it
        _current = previous
        if previous_env is None:
            os.environ.pop(TRIAL_ENV_VAR, None)
        else:
            os.environ[TRIAL_ENV_VAR] = previous_env


def _is_pruned_error(error: BaseException) -> bool:
    """Whether `error` is Optuna's TrialPruned (checked by name: optuna need not be installed)."""
    return any(cls.__name__ == "TrialPruned" and cls.__module__.startswith("optuna") for cls in type(error).__mro__)


def run_trial(eval_fn: Callable[..., Any], context: TrialContext, catch: bool = True) -> TrialOutcome:
    """Run `eval_fn(search_idx=..., **params)` as trial `context` and say how it ended.

    Args:
        eval_fn: The search's function.
        context: The trial.
        catch: Record an exception in the outcome (status 'failed') instead of raising it. Optuna's TrialPruned is
            always an outcome (status 'pruned').

    Returns:
        The outcome (the raw result; the search makes it storable).
    """
    start = time.perf_counter()
    outcome = TrialOutcome(search_idx=context.search_idx, params=dict(context.params), status="completed")
    with trial_context(context):
        try:
            outcome.result = eval_fn(search_idx=context.search_idx, **context.params)
        except Exception as error:  # pylint: disable=broad-except
            if _is_pruned_error(error):
                outcome.status = "pruned"
            elif not catch:
                raise
            else:
                outcome.status = "failed"
                outcome.error = f"{type(error).__name__}: {error}"
                buffer = io.StringIO()
                traceback.print_exc(file=buffer)
                outcome.traceback = buffer.getvalue()
                print(outcome.traceback, file=sys.stderr)
    if context.pruned_at is not None and outcome.status == "completed":
        outcome.status = "pruned"
    outcome.reports = list(context.reports)
    outcome.seconds = time.perf_counter() - start
    return outcome
