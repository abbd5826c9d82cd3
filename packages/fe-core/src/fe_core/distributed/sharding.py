"""How a data-parallel run splits each epoch's samples across ranks.

Every rank builds the same sample order (the permutation is drawn from a generator seeded with one number that rank
0 draws from its numpy global random state and broadcasts when the epoch starts), cuts it into *global* batches of
the Pipeline's `batch_size`, and takes its own part of each global batch. So:

- `batch_size` is the global batch size, as in FastEstimator: with N processes each one receives about
  `batch_size / N` samples per step (the first `batch_size % N` ranks one more), and one optimizer step consumes
  `batch_size` samples in all.
- Every sample is used exactly once per epoch, and every rank runs the same number of steps, so collectives (DDP's
  gradient all-reduce, buffer broadcasts) never wait for a rank that has run out of data.
- The remainder: a last global batch of `r < batch_size` samples is split the same way (the ranks get `r // N` or
  `r // N + 1` samples each). When `r` is smaller than the number of processes it cannot give every rank a sample;
  then it is merged into the previous global batch (that step is `batch_size + r` samples), so still no sample is
  dropped or repeated. With `drop_last` the partial global batch is dropped, as in a single process.
- A dataset with fewer samples than processes, or a `batch_size` smaller than the number of processes, is an error.

Evaluation and test data are split the same way, so a metric sees each sample once on exactly one rank and the
reduced statistics equal those of a single process.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from fe_core.distributed.communicator import Communicator

__all__ = ["epoch_order_rng", "global_batches", "rank_span", "rank_part", "check_batch_size"]


def epoch_order_rng(communicator: Communicator) -> np.random.RandomState:
    """The generator of this epoch's sample order, the same on every rank.

    Draws one number from numpy's global random state on every rank (so a resumed epoch that replays from a recorded
    random state draws the same one) and uses rank 0's. Then each rank re-seeds numpy's global generator from that
    number and its rank, so the ranks' random ops draw different numbers even when `enable_deterministic` seeded
    every process alike (and still repeat exactly from run to run).
    """
    seed = np.random.randint(0, 2 ** 31 - 1, dtype=np.int64)
    shared = int(communicator.broadcast(np.array([seed], dtype=np.int64))[0])
    np.random.seed([shared, communicator.rank, 0x5EED])
    return np.random.RandomState(shared)


def check_batch_size(batch_size: int, world_size: int, where: str) -> None:
    """Raise when a global batch cannot give every rank at least one sample.

    Raises:
        ValueError: If `batch_size < world_size`.
    """
    if batch_size < world_size:
        raise ValueError(f"The Pipeline's batch_size {batch_size} in {where} is the global batch size, split across "
                         f"{world_size} processes: it must be at least the number of processes")


def global_batches(order: np.ndarray, batch_size: int, drop_last: bool, world_size: int,
                   where: str = "the pipeline") -> List[np.ndarray]:
    """Cut an epoch's sample order into global batches, with the remainder policy of this module.

    Args:
        order: The epoch's sample indices, in order.
        batch_size: The global batch size.
        drop_last: Drop a partial last global batch.
        world_size: How many processes share each global batch.
        where: For messages.

    Returns:
        The index arrays of the global batches.

    Raises:
        ValueError: If there are fewer samples than processes, or `batch_size < world_size`.

    Example:
        >>> [b.tolist() for b in global_batches(np.arange(10), 4, False, 2)]
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        >>> [b.tolist() for b in global_batches(np.arange(9), 4, False, 2)]  # 1 left for 2 ranks: merged
        [[0, 1, 2, 3], [4, 5, 6, 7, 8]]
    """
    check_batch_size(batch_size, world_size, where)
    size = len(order)
    if size and size < world_size:
        raise ValueError(f"The dataset in {where} has {size} samples, fewer than the {world_size} processes training "
                         f"together: every process needs at least one sample per step")
    stop = size - size % batch_size if drop_last else size
    batches = [order[start:min(start + batch_size, stop)] for start in range(0, stop, batch_size)]
    if len(batches) > 1 and len(batches[-1]) < world_size:
        tail = batches.pop()
        batches[-1] = np.concatenate([batches[-1], tail])
    return batches


def rank_span(size: int, world_size: int, rank: int) -> Tuple[int, int]:
    """Where this rank's contiguous part of a global batch of `size` samples lies: (start, stop). Parts differ in
    size by at most one, larger parts first.

    Example:
        >>> [rank_span(5, 2, r) for r in range(2)]
        [(0, 3), (3, 5)]
    """
    base, extra = divmod(size, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def rank_part(indices: Sequence[Any], world_size: int, rank: int) -> Sequence[Any]:
    """This rank's contiguous part of a global batch (see `rank_span`).

    Example:
        >>> [rank_part(np.arange(5), 2, r).tolist() for r in range(2)]
        [[0, 1, 2], [3, 4]]
    """
    start, stop = rank_span(len(indices), world_size, rank)
    return indices[start:stop]
