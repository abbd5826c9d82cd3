"""The typed messages of an epoch: tasks, their results, and what a worker process needs to compute them.

Every value here is a frozen dataclass, picklable as is (the worker pool sends them through pipes and shared memory,
`fe_core.pipeline._transport`); code that receives one dispatches on its type, never on a position in a tuple. The
three made for every batch (`Task`, `BatchResult`, `SampleResult`) write their fields straight into the instance's
`__dict__` (a frozen dataclass's generated `__init__` sets each through `object.__setattr__`, about three times the
cost, which the in-process fast path would feel).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Optional, Union

import numpy as np

__all__ = ["Task", "BatchResult", "SampleResult", "TaskResult", "EpochDraws", "Shard", "EpochSpec"]


@dataclass(frozen=True, init=False)
class Task:
    """One task of an epoch: the dataset indices at consecutive stream positions from `start`.

    Attributes:
        start: The stream position of its first index (the task's seed derives from it).
        indices: The dataset indices.
        want_batch: Whether the assembler can still use the task as a whole batch (else its samples come back).
    """
    start: int
    indices: np.ndarray
    want_batch: bool = True

    def __init__(self, start: int, indices: np.ndarray, want_batch: bool = True) -> None:
        d = self.__dict__
        d["start"] = start
        d["indices"] = indices
        d["want_batch"] = want_batch


@dataclass(frozen=True, init=False)
class BatchResult:
    """A task computed into a whole batch.

    Attributes:
        count: The positions the task covered.
        batch: The batch (only the keys asked for), or the FilteredData of a batch op that filtered it out.
        key: The epoch's key (a result of another epoch is refused).
    """
    count: int
    batch: Any
    key: int

    def __init__(self, count: int, batch: Any, key: int) -> None:
        d = self.__dict__
        d["count"] = count
        d["batch"] = batch
        d["key"] = key


@dataclass(frozen=True, init=False)
class SampleResult:
    """A task computed sample by sample, left for the assembler to collate.

    Attributes:
        outcomes: What happened to each position (`KEPT`, `REPLACED` or `REMOVED`).
        samples: The kept samples, in order.
        indices: The kept samples' dataset indices.
        key: The epoch's key.
    """
    outcomes: List[int]
    samples: List[Dict[str, Any]]
    indices: List[int]
    key: int

    def __init__(self, outcomes: List[int], samples: List[Dict[str, Any]], indices: List[int], key: int) -> None:
        d = self.__dict__
        d["outcomes"] = outcomes
        d["samples"] = samples
        d["indices"] = indices
        d["key"] = key


TaskResult = Union[BatchResult, SampleResult]


@dataclass(frozen=True)
class EpochDraws:
    """An epoch's random draws, taken once in the trainer whatever runs the tasks.

    Attributes:
        reset_seed: The seed of the dataset's per-epoch index maps (None without `fe_reset_ds`).
        first_order: The first pass's order (None: arange).
        key: The epoch's key: every task's seed and later passes' orders derive from it.
    """
    reset_seed: Optional[int]
    first_order: Optional[np.ndarray]
    key: int


@dataclass(frozen=True)
class Shard:
    """Which part of every global batch this process computes: (world size, rank); one process is the identity."""
    world: int = 1
    rank: int = 0

    @property
    def whole(self) -> bool:
        """Whether this is the identity shard (one process takes every sample)."""
        return self.world == 1


@dataclass(frozen=True)
class EpochSpec:
    """What a worker process needs to compute an epoch's tasks: it builds the same plan from its planner and draws
    the dataset's index maps from the same seed.

    Attributes:
        mode: The mode.
        epoch: The epoch.
        ds_id: The dataset id.
        output_keys: The keys asked for (None: all).
        warmup: The Estimator's warmup epoch.
        shuffle: Whether the epoch is shuffled.
        key: The epoch's key.
        reset_seed: The index-map seed (None: the dataset has none).
        member: Which member of an InterleaveDataset (None: the dataset itself).
        shard: This process's part of a dataset of whole batches in a data-parallel run.
    """
    mode: str
    epoch: int
    ds_id: str
    output_keys: Optional[FrozenSet[str]]
    warmup: bool
    shuffle: bool
    key: int
    reset_seed: Optional[int]
    member: Optional[int]
    shard: Shard
