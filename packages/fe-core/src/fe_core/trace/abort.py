"""What happens when a run fails or is interrupted (Ctrl-C): one line saying where it stopped, and no `on_end`.

A trace's `on_end` means "the run is over": the Logger prints `FastEstimator-Finish`, savers make their final save,
reports are written as complete. After an error or a Ctrl-C none of that is true, so the Estimator skips `on_end` and
calls `abort_run` instead: traces holding something that must be given back (the progress bar's hold on standard
output) release it through their `fe_abort()` method, and the main process prints one line on standard error, e.g.

    FastEstimator-Interrupted: step 270 (train epoch 3); re-run the script to resume from /runs/ckpt/step-250

naming the newest checkpoint of the run's RestoreWizard when there is one.
"""
from __future__ import annotations

import sys
from typing import Any, Iterable, Optional

from fe_core.distributed.communicator import is_main_process
from fe_core.distributed.failure import PeerFailure
from fe_core.trace.io.restore_wizard import RestoreWizard

__all__ = ["abort_run", "abort_message"]


def _latest_checkpoint(traces: Iterable[Any]) -> Optional[str]:
    for trace in traces:
        if isinstance(trace, RestoreWizard):
            try:
                return trace.latest()
            except OSError:
                return None
    return None


def abort_message(traces: Iterable[Any], system: Any, how: str, error: Optional[BaseException] = None) -> str:
    """The one line printed when a run is `how` ('interrupted' or 'failed')."""
    traces = list(traces)
    step = getattr(system, "global_step", None) or 0
    where = f"{getattr(system, 'mode', None)} epoch {getattr(system, 'epoch_idx', None)}"
    line = f"FastEstimator-{how.capitalize()}: step {step} ({where})"
    if isinstance(error, PeerFailure):  # another process of a data-parallel run failed: which one, and why
        line += f": {error}"
    elif error is not None:
        line += f" by {type(error).__name__}"
    checkpoint = _latest_checkpoint(traces)
    has_wizard = any(isinstance(trace, RestoreWizard) for trace in traces)
    if checkpoint:
        line += f"; re-run the script to resume from {checkpoint}"
    elif has_wizard:
        line += "; no checkpoint was written yet, so a re-run starts from the beginning"
    return line


def abort_run(traces: Iterable[Any], system: Any, how: str, error: Optional[BaseException] = None) -> None:
    """Release what traces hold (their `fe_abort()`), then print `abort_message` on standard error (main process).

    Args:
        traces: The run's traces.
        system: The run's System (step, mode and epoch for the message).
        how: 'interrupted' or 'failed'.
        error: The exception of a failure (its type is named).
    """
    traces = list(traces)
    for trace in traces:
        release = getattr(trace, "fe_abort", None)
        if callable(release):
            try:
                release()
            except Exception:  # pylint: disable=broad-except  (the run's own error is the one to report)
                pass
    if is_main_process():
        sys.stderr.write(abort_message(traces, system, how, error) + "\n")
        sys.stderr.flush()
