"""SIGTERM (what job schedulers and `kill` send before killing) during `fit` / `test`, handled like Ctrl-C.

While a run is in progress in the main thread of the main process, and nobody else handles SIGTERM, the signal
raises `Terminated` (a KeyboardInterrupt) at the step being run: the Estimator prints its one
`FastEstimator-Interrupted: ...` line (naming the RestoreWizard checkpoint to resume from), the run history records
the run as 'Aborted', and `fit` / `test` then end the process with exit code 143 (128 + SIGTERM), as the signal
would have. A handler the user installed is left alone; forked worker processes keep SIGTERM's default.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any, Iterator

__all__ = ["Terminated", "sigterm_as_interrupt", "SIGTERM_EXIT_CODE"]

SIGTERM_EXIT_CODE = 128 + int(getattr(signal, "SIGTERM", 15))


class Terminated(KeyboardInterrupt):
    """SIGTERM received while a run was in progress (see `sigterm_as_interrupt`)."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in this process (when it is the main thread and SIGTERM has
    its default action); outside it, SIGTERM is what it was."""
    sigterm = getattr(signal, "SIGTERM", None)
    if (sigterm is None or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(sigterm) is not signal.SIG_DFL):
        yield
        return
    owner = os.getpid()

    def terminate(signum: int, frame: Any) -> None:  # pylint: disable=unused-argument
        if os.getpid() != owner:  # a process forked during the run: die as SIGTERM's default would
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated("SIGTERM")

    signal.signal(sigterm, terminate)
    try:
        yield
    finally:
        if signal.getsignal(sigterm) is terminate:
            signal.signal(sigterm, signal.SIG_DFL)
