"""Which process of a data-parallel run failed, and why, said by the process that logs.

When one process of a run fails, the others learn of it only as a broken connection inside their next collective
(gloo: "Connection closed by peer"), which the logging process (rank 0) would otherwise report as its own failure, in
whatever op happened to be waiting ("UpdateOp ... failed ... Connection reset by peer"). So:

- a process that fails writes one line, `<ExceptionType>: <message>`, where every process can read it
  (`record_failure`; the torch backend writes it into the process group's store, which the launcher holds), before
  it exits and its connections close;
- the logging process, when its own error is such a lost connection, looks for those lines (`peer_failure`) and
  reports the peer's error instead: `rank 1 failed: ValueError: ...`; with no line written (the process was killed
  by a signal, `kill -9`, or ran out of memory) it names the rank whose process is gone from this machine:
  `rank 1 died (killed by a signal, or out of memory)`; otherwise that it lost the connection to another process.

A backend's communicator provides the three primitives (`record_failure`, `failure_reports`, `lost_ranks`) and says
which errors are lost connections (`is_connection_loss`); the single-process communicator has none of them.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from typing import Callable, Dict, Iterator, List, Optional

from fe_core.distributed.communicator import Communicator, get_communicator
from fe_core.termination import Terminated

__all__ = ["PeerFailure", "record_failure", "peer_failure", "report_failure", "describe_error", "pid_alive",
           "sigterm_held"]


#: Seconds the logging process looks for what happened to a peer whose connection broke before it says only that.
LOST_PEER_WAIT_S = 3.0


class PeerFailure(RuntimeError):
    """Another process of this data-parallel run failed or died, which broke this process's collective.

    Its message says which rank and why, e.g. `rank 1 failed: ValueError: bad value` or `rank 1 died (killed by a
    signal, or out of memory)`.
    """


def describe_error(error: BaseException) -> str:
    """`<ExceptionType>: <first line of its message>` (the type alone for an empty message)."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


_INTERRUPTIONS = ("KeyboardInterrupt", "Terminated")


def record_failure(error: BaseException, communicator: Optional[Communicator] = None) -> None:
    """Tell the other processes why this one fails (nothing in a single process, or when `error` is itself a lost
    connection to a peer: the peer that failed first is the one to report). A KeyboardInterrupt (Ctrl-C, SIGTERM) is
    recorded too, so that a process stopped on purpose is not reported as dead. Never raises."""
    comm = communicator or get_communicator()
    if comm.world_size == 1 or isinstance(error, PeerFailure) or comm.is_connection_loss(error):
        return
    try:
        comm.record_failure(describe_error(error))
    except Exception:  # pylint: disable=broad-except  # the run's own error is the one to raise
        pass


def peer_failure(error: BaseException, communicator: Optional[Communicator] = None,
                 terminated: bool = False) -> Optional[PeerFailure]:
    """When `error` is this process losing its connection to the others, what happened to them; else None.

    Args:
        error: This process's error.
        communicator: The run's communicator (default: the active one).
        terminated: `error` is a SIGTERM, which a launcher (torchrun) sends to the other processes when one fails:
            a `PeerFailure` only when a peer recorded a failure or is gone.

    Returns:
        A `PeerFailure` naming the rank(s) that failed (with their error) or died, or saying that the connection to
        another process was lost; None in a single process or for an error of this process's own.
    """
    comm = communicator or get_communicator()
    if comm.world_size == 1 or isinstance(error, PeerFailure) or not (terminated or comm.is_connection_loss(error)):
        return None
    # A killed process's connections close while it is still exiting: until it is gone, look again for a while.
    deadline = time.monotonic() + (0.0 if terminated else LOST_PEER_WAIT_S)
    while True:
        parts = _what_happened(comm)
        if parts or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if not parts:
        if terminated:
            return None
        parts = [f"rank {comm.rank} lost its connection to another process of the run (it died, or its machine was "
                 f"lost; see that process's output): {describe_error(_innermost(error))}"]
    return PeerFailure("; ".join(parts))


def report_failure(error: BaseException, report: Callable[[BaseException], None]) -> Optional[PeerFailure]:
    """A run failed with `error`: record it for the other processes, find out whether it is really another process's
    failure (`peer_failure`), and call `report` with what to report (that `PeerFailure`, else `error`), with SIGTERM
    held. A SIGTERM already on its way when the failure is handled (the launcher terminating the survivors of a
    failed process) is absorbed: the failure is what to report, not an interruption.

    Returns:
        The `PeerFailure` to raise instead of `error`, or None.
    """
    with sigterm_held():
        try:
            _pending_signals_run_here()
        except Terminated:
            pass
        record_failure(error)
        peer = peer_failure(error)
        report(peer or error)
    return peer


def _pending_signals_run_here() -> None:
    """Python runs a signal's handler at the next function call: a SIGTERM received before it was held raises here."""


def _what_happened(comm: Communicator) -> List[str]:
    """What the other processes recorded (their errors), and which of them are gone without a word."""
    try:
        reports: Dict[int, str] = {rank: text for rank, text in comm.failure_reports().items() if rank != comm.rank}
        lost: List[int] = [rank for rank in comm.lost_ranks() if rank != comm.rank and rank not in reports]
    except Exception:  # pylint: disable=broad-except  # the launcher's store may be gone too
        return []
    # a process stopped like this one (Ctrl-C or SIGTERM to every process, a preempted job) neither failed nor died
    reports = {rank: text for rank, text in reports.items() if text.split(":")[0] not in _INTERRUPTIONS}
    return ([f"rank {rank} failed: {text}" for rank, text in sorted(reports.items())]
            + [f"rank {rank} died (killed by a signal, or out of memory)" for rank in sorted(lost)])


@contextlib.contextmanager
def sigterm_held() -> Iterator[None]:
    """Within the block, a SIGTERM waits (delivered at its end): a launcher terminates the survivors as soon as one
    process dies, and the logging process must first finish saying which one."""
    sigterm = getattr(signal, "SIGTERM", None)
    if sigterm is None or not hasattr(signal, "pthread_sigmask") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {sigterm})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _innermost(error: BaseException) -> BaseException:
    seen = set()
    while error.__cause__ is not None and id(error) not in seen:
        seen.add(id(error))
        error = error.__cause__
    return error


def pid_alive(pid: int) -> bool:
    """Whether process `pid` of this machine exists and is not a zombie (a dead child not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    except OSError:
        return True
