"""`GeneratorFeed`: a GeneratorDataset's generator running ahead in one worker process.

A generator has one order and cannot be split across workers, so its samples are drawn in a single process forked
from the trainer (a generator cannot be pickled: with another start method it stays in the trainer), overlapped with
training: the feed keeps up to `window` samples ready ahead of the trainer (credits: the trainer grants one per sample
it takes). The order is the generator's, continued from epoch to epoch; the per-sample ops still run in the trainer,
seeded per task as in every path. The generator draws its randomness in the feed process, from the random state it
had when the feed started. The feed process stops when asked, when the trainer is gone (its parent changes) or with
the Pipeline's pool (`Pipeline.close`).
"""
from __future__ import annotations

import os
import signal
from multiprocessing import get_context
from typing import Any, Optional

__all__ = ["GeneratorFeed"]

_POLL = 0.5


def _feed_main(dataset: Any, connection: Any, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the trainer stops us
    credits = 0
    try:
        while True:
            while credits == 0 or connection.poll():
                if not connection.poll(_POLL):
                    if os.getppid() != parent:
                        return
                    continue
                message = connection.recv()
                if message is None:
                    return
                credits += message
            try:
                reply: Any = ("ok", dataset[0])  # GeneratorDataset: the generator's next sample, whatever the index
            except BaseException as error:  # pylint: disable=broad-except  # re-raised in the trainer
                reply = ("error", error)
            try:
                connection.send(reply)
            except Exception as error:  # pylint: disable=broad-except  # e.g. an unpicklable value
                connection.send(("error", TypeError(f"A GeneratorDataset sample could not be sent from its feed "
                                                    f"process ({type(error).__name__}: {error})")))
            credits -= 1
    except (EOFError, OSError):  # the trainer is gone
        return


class GeneratorFeed:
    """One process drawing a GeneratorDataset's samples ahead of the trainer.

    Args:
        dataset: The GeneratorDataset.
        window: How many samples may wait ready ahead of the trainer.
    """

    def __init__(self, dataset: Any, window: int) -> None:
        context = get_context("fork")
        self.connection, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_feed_main, args=(dataset, child, os.getpid()), daemon=True,
                                       name="fe-pipeline-generator")
        self.process.start()
        child.close()
        self.connection.send(window)

    @property
    def pid(self) -> Optional[int]:
        """The feed process's id."""
        return self.process.pid

    def next(self, index: int = 0) -> Any:
        """The generator's next sample (the index is ignored, as GeneratorDataset ignores it)."""
        while not self.connection.poll(_POLL):
            if not self.process.is_alive() and not self.connection.poll():
                raise RuntimeError(f"The GeneratorDataset feed process (pid {self.process.pid}) ended with code "
                                   f"{self.process.exitcode}")
        kind, value = self.connection.recv()
        self.connection.send(1)
        if kind == "error":
            raise value
        return value

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
