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

import os
import signal
from multiprocessing import get_context
from typing import Any, List, Optional

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
        self.outstanding = 0  # samples asked for and not yet taken
        self.connection, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_feed_main, args=(dataset, child, os.getpid()), daemon=True,
                                       name="fe-pipeline-generator")
        self.process.start()
        child.close()

    @property
    def pid(self) -> Optional[int]:
        """The feed process's id."""
        return self.process.pid

    def request(self, seeds: List[int]) -> None:
        """Ask for one sample per seed, drawn in order with the random state seeded by it."""
        if seeds:
            self.connection.send(list(seeds))
            self.outstanding += len(seeds)

    def next(self, index: int = 0) -> Any:
        """The next sample asked for (the index is ignored, as GeneratorDataset ignores it).

        Raises:
            RuntimeError: If no sample was asked for, or the feed process ended.
        """
        if self.outstanding <= 0:
            raise RuntimeError("A GeneratorDataset sample was taken from its feed process without being asked for")
        while not self.connection.poll(_POLL):
            if not self.process.is_alive() and not self.connection.poll():
                raise RuntimeError(f"The GeneratorDataset feed process (pid {self.process.pid}) ended with code "
                                   f"{self.process.exitcode}")
        kind, value = self.connection.recv()
        self.outstanding -= 1
        if kind == "error":
            raise value
        return value

    def drain(self) -> None:
        """Take and drop the samples asked for by an epoch that stopped before using them (their seeds were that
        epoch's), so the next epoch's samples come in its own order."""
        while self.outstanding > 0:
            try:
                self.next()
            except Exception:  # pylint: disable=broad-except  # that epoch's error, no longer anyone's
                pass

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
