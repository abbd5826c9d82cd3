"""Errors in a Pipeline's worker processes: carried to the trainer as plain data and re-raised there as themselves
(or a `PipelineWorkerError`), with their notes, the worker named and its traceback as the cause."""
from __future__ import annotations

import os
import pickle
import signal
import traceback
from typing import Any, List, Optional, Tuple

from fe_core.pipeline.op_runner import add_note

__all__ = ["PipelineWorkerError", "RemoteTraceback", "portable_error", "rebuild_error", "death_message"]


class PipelineWorkerError(RuntimeError):
    """An error in a Pipeline worker process that could not be sent back as itself, or a worker that died."""


class RemoteTraceback(Exception):
    """A worker's traceback, as the cause of the error re-raised in the trainer."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def portable_error(error: BaseException) -> Tuple[Optional[bytes], str, str, List[str], str, int]:
    """`error` as plain data that crosses processes: (its pickle or None, type name, message, notes, traceback text,
    pid)."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        blob: Optional[bytes] = pickle.dumps(error)
        pickle.loads(blob)
    except Exception:  # pylint: disable=broad-except
        blob = None
    return (blob, type(error).__name__, str(error), list(getattr(error, "__notes__", ())), text, os.getpid())


def death_message(index: int, process: Any, plan: Any) -> str:
    """What to say about worker `index` whose process ended (its signal or exit code, and what to try)."""
    code = process.exitcode
    if code is not None and code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
    else:
        how = f"exited with code {code}"
    where = f" while preparing batches in {plan.where()}" if plan is not None else ""
    return (f"Pipeline worker {index} (pid {process.pid}) {how}{where}. The operating system kills processes this way "
            f"when memory runs out: try a smaller Pipeline num_process or batch size (num_process=0 runs the pipeline "
            f"in the training process)")


def rebuild_error(info: Tuple[Optional[bytes], str, str, List[str], str, int], index: int) -> BaseException:
    """The exception `portable_error` described, rebuilt in the trainer with its notes, the worker named and its
    traceback as the cause."""
    blob, name, message, notes, text, pid = info
    error: Optional[BaseException] = None
    if blob is not None:
        try:
            error = pickle.loads(blob)
        except Exception:  # pylint: disable=broad-except
            error = None
    if error is None:
        error = PipelineWorkerError(f"{name}: {message}")
    for note in notes:
        add_note(error, note)
    add_note(error, f"raised in Pipeline worker {index} (pid {pid}); set Pipeline(num_process=0) to run the "
                    f"pipeline in the training process")
    error.__cause__ = RemoteTraceback(f"\n\"\"\"\n{text}\"\"\"")
    return error
