"""`ThreadGroup`: ranks simulated by threads of one process, for testing distributed code without a framework.

Each thread gets a `ThreadCommunicator` (installed for that thread only), whose collectives exchange numpy arrays
through shared memory; the results are the same as a real process group's. fe-core's own tests use it to check that
metrics, logged means and sample sharding agree with a single process; a library that writes traces on fe-core can
do the same.

Example:
    >>> from fe_core.distributed.communicator import get_communicator
    >>> ThreadGroup(2).run(lambda: int(get_communicator().all_reduce(np.array(get_communicator().rank + 1))))
    [3, 3]
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from fe_core.distributed.communicator import Communicator, set_communicator
from fe_core.distributed.failure import PeerFailure

__all__ = ["ThreadGroup", "ThreadCommunicator"]


class _Exchange:
    def __init__(self, world_size: int, timeout: float) -> None:
        self.barrier = threading.Barrier(world_size, timeout=timeout)
        self.slots: List[Any] = [None] * world_size
        self.failures: Dict[int, str] = {}  # what `record_failure` left, by rank


class ThreadCommunicator(Communicator):
    """One simulated rank of a `ThreadGroup`."""

    name = "threads"

    def __init__(self, exchange: _Exchange, world_size: int, rank: int) -> None:
        super().__init__(world_size=world_size, rank=rank, local_rank=rank)
        self._exchange = exchange

    def _gather(self, array: np.ndarray) -> List[np.ndarray]:
        exchange = self._exchange
        exchange.slots[self.rank] = np.array(array, copy=True)
        exchange.barrier.wait()
        values = list(exchange.slots)
        exchange.barrier.wait()  # nobody overwrites a slot before everyone has read it
        return values

    def _all_reduce(self, array: np.ndarray, op: str) -> np.ndarray:
        stacked = np.stack(self._gather(array))
        return {"sum": np.sum, "max": np.max, "min": np.min}[op](stacked, axis=0).astype(array.dtype)

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        return np.stack(self._gather(array))

    def barrier(self) -> None:
        self._exchange.barrier.wait()

    def record_failure(self, text: str) -> None:
        self._exchange.failures[self.rank] = text

    def failure_reports(self) -> Dict[int, str]:
        return dict(self._exchange.failures)

    def is_connection_loss(self, error: BaseException) -> bool:
        """A broken barrier is how a thread rank sees another rank fail."""
        return isinstance(error, threading.BrokenBarrierError) or super().is_connection_loss(error)


class ThreadGroup:
    """Run a function on `world_size` threads, each one a rank with its own communicator.

    Args:
        world_size: How many ranks.
        timeout: Seconds a collective waits for the other ranks before failing (a hang becomes an error).
    """

    def __init__(self, world_size: int, timeout: float = 60.0) -> None:
        self.world_size = world_size
        self.timeout = timeout

    def run(self, function: Callable[..., Any], *args: Any) -> List[Any]:
        """Call `function(*args)` on every rank; returns each rank's result, in rank order.

        Raises:
            Exception: The first rank's exception, if any rank raised.
            TimeoutError: If a rank is still running after four times `timeout`.
        """
        exchange = _Exchange(self.world_size, self.timeout)
        results: List[Any] = [None] * self.world_size
        errors: List[Optional[BaseException]] = [None] * self.world_size

        def target(rank: int) -> None:
            set_communicator(ThreadCommunicator(exchange, self.world_size, rank), thread_only=True)
            try:
                results[rank] = function(*args)
            except BaseException as error:  # pylint: disable=broad-except  (re-raised in the caller)
                errors[rank] = error
                exchange.barrier.abort()
            finally:
                set_communicator(None, thread_only=True)

        threads = [threading.Thread(target=target, args=(rank,), daemon=True) for rank in range(self.world_size)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.timeout * 4)
        stuck = [rank for rank, thread in enumerate(threads) if thread.is_alive()]
        if stuck:
            raise TimeoutError(f"ThreadGroup: ranks {stuck} did not finish within {self.timeout * 4} s")
        # the rank that failed first, not those that saw it fail (a broken barrier, or a PeerFailure reporting it)
        for error in errors:
            if error is not None and not isinstance(error, threading.BrokenBarrierError) \
                    and not isinstance(error, PeerFailure):
                raise error
        for error in errors:
            if error is not None:
                raise error
        return results
