"""Counterbalanced epoch pairs: each timed epoch of the code under test next to one epoch of the reference loop.

Both epochs of a pair run back to back, so a drift in machine speed (another tenant, the CPU clock) affects both.
But back to back, the *second* epoch of a pair runs measurably faster on the machines these benchmarks ran on,
whichever side it is: torch LeNet measured 0.92-0.98x with the reference epoch second and 0.99-1.04x with it first.
So the reference runs right after the timed epoch in odd-numbered pairs and right before it in even-numbered ones,
and the benchmarks count an even number of pairs: the position bias cancels in the median of the per-pair ratios.

`EpochPairs` does the bookkeeping for anything with epoch-begin and epoch-end hooks (a Keras callback);
`PairedEpochs` is the fe Trace built on it; `alternating_pairs` pairs two plain epoch functions.
"""
from __future__ import annotations

import time
from typing import Callable, List, Optional, Tuple

from fe_core.trace import Trace

__all__ = ["EpochPairs", "PairedEpochs", "alternating_pairs"]

Pair = Tuple[float, float]


class EpochPairs:
    """Pairs the epochs timed between `begin()` and `end(steps)` with epochs of `reference_epoch`.

    Args:
        reference_epoch: Runs one epoch of the reference loop and returns its steps/sec.
        synchronize: Waits for queued device work (CUDA), called before each clock reading of the timed epoch.

    Attributes:
        pairs: (timed steps/sec, reference steps/sec) for every epoch so far, the first included.
    """

    def __init__(self, reference_epoch: Callable[[], float], synchronize: Callable[[], None] = lambda: None) -> None:
        self.reference_epoch = reference_epoch
        self.synchronize = synchronize
        self.pairs: List[Pair] = []
        self._reference: Optional[float] = None
        self._start = 0.0

    def begin(self) -> None:
        """Call as the timed epoch begins (the reference epoch runs first in even-numbered pairs)."""
        second_of_pair = len(self.pairs) % 2 == 1
        self._reference = self.reference_epoch() if second_of_pair else None
        self.synchronize()
        self._start = time.perf_counter()

    def end(self, steps: int) -> None:
        """Call as the timed epoch ends, with the number of steps it ran."""
        self.synchronize()
        rate = steps / (time.perf_counter() - self._start)
        reference = self._reference if self._reference is not None else self.reference_epoch()
        self.pairs.append((rate, reference))


class PairedEpochs(Trace):
    """Times each fe training epoch and pairs it with an epoch of `reference_epoch` (see `EpochPairs`).

    It has epoch hooks only, so it adds nothing to fe's steps.
    """

    def __init__(self, reference_epoch: Callable[[], float], synchronize: Callable[[], None] = lambda: None) -> None:
        super().__init__(mode="train")
        self.timer = EpochPairs(reference_epoch, synchronize)
        self._steps = 0

    @property
    def pairs(self) -> List[Pair]:
        return self.timer.pairs

    def on_epoch_begin(self, data):  # type: ignore[no-untyped-def]
        self.timer.begin()
        self._steps = self.system.global_step or 0

    def on_epoch_end(self, data):  # type: ignore[no-untyped-def]
        self.timer.end(self.system.global_step - self._steps)


def alternating_pairs(first: Callable[[], float], second: Callable[[], float], count: int) -> List[Pair]:
    """`count` pairs (first(), second()) of back-to-back epochs, which of the two runs first alternating."""
    pairs = []
    for index in range(count):
        if index % 2:
            later = second()
            pairs.append((first(), later))
        else:
            earlier = first()
            pairs.append((earlier, second()))
    return pairs
