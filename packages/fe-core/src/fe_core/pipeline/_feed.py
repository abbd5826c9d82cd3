"""`GeneratorFeed`: a GeneratorDataset's generator running ahead in one worker process.

A generator has one order and cannot be split across workers, so its samples are drawn in a single process forked
from the trainer (a generator cannot be pickled: with another start method it stays in the trainer), overlapped with
training: the trainer asks for the samples of up to `window` stream positions ahead of the one it computes, sending
the seed of each (`TaskRunner.generator_seed`: the epoch's key and the position), and the feed draws one sample per
seed with numpy's global random state and Python's `random` seeded by it, exactly as the trainer seeds each draw when
it runs the generator itself. So a generator drawing from np.random gives the same samples with or without worker
processes, and a resumed run (which asks for the same positions) repeats them. The order is the generator's,
continued from epoch to epoch; the per-sample ops still run in the trainer, seeded per task as in every path. The
feed process stops when asked, when the trainer is gone (its parent changes) or with the Pipeline's pool
(`Pipeline.close`).
"""
from __future__ import annotations

import collections
import itertools
import os
import signal
from multiprocessing import get_context
from typing import Any, Deque, Dict, List, Optional

from fe_core.pipeline._sample_epoch import SeededRandom

__all__ = ["GeneratorFeed"]

_POLL = 0.5


def _feed_main(dataset: Any, connection: Any, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the trainer stops us
    seeds: List[int] = []
    seeded = SeededRandom(restore=False)  # this process's own random state is of no use to anyone
    try:
        while True:
            while not seeds or connection.poll():
                if not connection.poll(_POLL):
                    if os.getppid() != parent:
                        return
                    continue
                message = connection.recv()
                if message is None:
                    return
                seeds.extend(message)
            try:  # GeneratorDataset: the generator's next sample, whatever the index
                reply: Any = ("ok", seeded.call(seeds.pop(0), dataset.__getitem__, 0))
            except BaseException as error:  # pylint: disable=broad-except  # re-raised in the trainer
                reply = ("error", error)
            try:
                connection.send(reply)
            except Exception as error:  # pylint: disable=broad-except  # e.g. an unpicklable value
                connection.send(("error", TypeError(f"A GeneratorDataset sample could not be sent from its feed "
                                                    f"process ({type(error).__name__}: {error})")))
    except (EOFError, OSError):  # the trainer is gone
        return


class GeneratorFeed:
    """One process drawing a GeneratorDataset's samples ahead of the trainer.

    Args:
        dataset: The GeneratorDataset.
        window: How many samples the trainer asks for ahead of the one it computes.
    """

    def __init__(self, dataset: Any, window: int) -> None:
        context = get_context("fork")
        self.window = window
        # The feed answers in the order asked; each answer belongs to the iteration (token) that asked for it, so
        # two iterations open at once (zip(loader, loader)) each get their own samples, and the samples asked for by
        # an iteration that stopped early are dropped when they arrive.
        self.askers: Deque[int] = collections.deque()  # the token of each answer still to come, in order
        self.ready: Dict[int, Deque[Any]] = {}  # answers received for an open iteration other than the one reading
        self.tokens = itertools.count()
        self.connection, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_feed_main, args=(dataset, child, os.getpid()), daemon=True,
                                       name="fe-pipeline-generator")
        self.process.start()
        child.close()

    @property
    def pid(self) -> Optional[int]:
        """The feed process's id."""
        return self.process.pid

    def open(self) -> int:
        """Start an iteration's requests; returns its token."""
        token = next(self.tokens)
        self.ready[token] = collections.deque()
        return token

    def request(self, token: int, seeds: List[int]) -> None:
        """Ask for one sample per seed for iteration `token`, drawn in order with the random state seeded by it."""
        if seeds:
            self.connection.send(list(seeds))
            self.askers.extend([token] * len(seeds))

    def next(self, token: int) -> Any:
        """The next sample iteration `token` asked for.

        Raises:
            RuntimeError: If the iteration has no sample asked for, or the feed process ended.
        """
        ready = self.ready[token]
        while not ready:
            if token not in self.askers:
                raise RuntimeError("A GeneratorDataset sample was taken from its feed process without being asked "
                                   "for")
            while not self.connection.poll(_POLL):
                if not self.process.is_alive() and not self.connection.poll():
                    raise RuntimeError(f"The GeneratorDataset feed process (pid {self.process.pid}) ended with code "
                                       f"{self.process.exitcode}")
            answer = self.connection.recv()
            asker = self.askers.popleft()
            if asker in self.ready:  # else an iteration that stopped: its sample is dropped
                self.ready[asker].append(answer)
        kind, value = ready.popleft()
        if kind == "error":
            raise value
        return value

    def release(self, token: int) -> None:
        """End iteration `token`: the samples it asked for and did not take are dropped."""
        self.ready.pop(token, None)

    def close(self) -> None:
        """Stop the feed process."""
        try:
            self.connection.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(timeout=2.0)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=1.0)
        self.connection.close()
