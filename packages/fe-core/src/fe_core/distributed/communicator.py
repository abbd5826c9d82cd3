"""The communicator: fe-core's one, framework-free view of the processes that train together.

A data-parallel run (torchrun + DistributedDataParallel, or TensorFlow's MultiWorkerMirroredStrategy) has several
processes ("ranks"), each with its own Pipeline, Network copy and Traces. Everything in fe-core that must agree
across ranks - the sample order, metric statistics, logged losses, checkpoints - talks to them through the active
`Communicator`: world size, rank, all-reduce / all-gather / broadcast of numpy arrays, and a barrier. A backend
implements it with its framework's own collectives (`fe_torch.distributed`: torch.distributed; `fe_tf.distribute`:
the strategy's collective ops) and installs it with `set_communicator`; without one, `get_communicator()` is a
single-process communicator whose collectives return their input, so single-process code pays nothing.

Backends implement three primitives on arrays of the same shape and dtype on every rank (`_all_reduce`,
`_all_gather_equal`, `barrier`); this base builds the rest (arrays of different shapes and dtypes per rank, bytes,
broadcast) on top of them.
"""
from __future__ import annotations

import io
import os
import threading
from typing import Any, Dict, List, Optional

import numpy as np

__all__ = ["Communicator", "LocalCommunicator", "get_communicator", "set_communicator", "is_main_process",
           "launcher_env", "REDUCE_OPS"]

REDUCE_OPS = ("sum", "max", "min")
#: What the collective libraries say when a peer process is gone (gloo, NCCL, gRPC).
CONNECTION_LOSS_MARKERS = ("Connection closed by peer", "Connection reset by peer", "Broken pipe",
                           "caused by a remote worker", "Socket closed", "failed to connect to all addresses",
                           "NCCL communicator was aborted", "remote process exited or there was a network error")


class Communicator:
    """The processes of one data-parallel run, and the collectives between them.

    Every collective must be called by every rank, in the same order, or the run hangs: fe calls them only at
    points every rank reaches (the end of a dataset or epoch, a checkpoint, a training log step - decided by the
    global step), never on the other steps.

    Attributes:
        world_size: How many processes train together.
        rank: This process's index, from 0.
        local_rank: This process's index on its machine (picks its GPU).
        name: What implements it ('local', 'torch', 'tf', ...).
    """

    name = "base"

    def __init__(self, world_size: int = 1, rank: int = 0, local_rank: int = 0) -> None:
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"Communicator needs 0 <= rank < world_size, got rank {rank}, world_size {world_size}")
        self.world_size = int(world_size)
        self.rank = int(rank)
        self.local_rank = int(local_rank)

    @property
    def is_main(self) -> bool:
        """Whether this is rank 0, the process that prints logs and writes files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """Whether more than one process trains."""
        return self.world_size > 1

    # ------------------------------------------------------------------ primitives (backends implement these)
    def _all_reduce(self, array: np.ndarray, op: str) -> np.ndarray:
        """Reduce `array` (same shape and dtype on every rank) element-wise with `op` ('sum', 'max', 'min')."""
        raise NotImplementedError(f"{type(self).__name__} must implement _all_reduce")

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        """Stack every rank's `array` (same shape and dtype everywhere) along a new first axis, in rank order."""
        raise NotImplementedError(f"{type(self).__name__} must implement _all_gather_equal")

    def barrier(self) -> None:
        """Wait until every rank reaches this point."""
        raise NotImplementedError(f"{type(self).__name__} must implement barrier")

    # ------------------------------------------------------------------ failures (see fe_core.distributed.failure)
    def record_failure(self, text: str) -> None:
        """Leave `text` (why this process fails) where the other processes can read it; by default nowhere."""
        return None

    def failure_reports(self) -> Dict[int, str]:
        """{rank: text} of the processes that recorded a failure (never waits for one)."""
        return {}

    def lost_ranks(self) -> List[int]:
        """The ranks whose process is known to be gone (killed, crashed) without recording a failure."""
        return []

    def is_connection_loss(self, error: BaseException) -> bool:
        """Whether `error` (or an error it was raised from) is this process losing its connection to the others,
        i.e. a consequence of another process's failure rather than a failure of its own."""
        seen = set()
        current: Optional[BaseException] = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, (ConnectionError, BrokenPipeError)) or any(
                    marker in str(current) for marker in CONNECTION_LOSS_MARKERS):
                return True
            current = current.__cause__ or current.__context__
        return False

    # ------------------------------------------------------------------ built on the primitives
    def all_reduce(self, array: Any, op: str = "sum") -> np.ndarray:
        """Element-wise reduction of an array every rank holds with the same shape.

        Integers are reduced as int64 and everything else as float64, so counts stay exact.

        Args:
            array: This rank's array (or scalar).
            op: 'sum', 'max' or 'min'.

        Returns:
            The reduced array (the same on every rank), with the input's dtype.

        Raises:
            ValueError: For an unknown `op`.
        """
        if op not in REDUCE_OPS:
            raise ValueError(f"Communicator.all_reduce: op must be one of {REDUCE_OPS}, got {op!r}")
        value = np.asarray(array)
        if self.world_size == 1:
            return value.copy()
        wide = np.int64 if value.dtype.kind in "biu" else np.float64
        reduced = np.asarray(self._all_reduce(np.array(value, dtype=wide, order="C"), op)).reshape(value.shape)
        return reduced.astype(value.dtype, copy=False)

    def all_gather(self, array: Any) -> List[np.ndarray]:
        """Every rank's array, in rank order; shapes and dtypes may differ between ranks.

        Args:
            array: This rank's array.

        Returns:
            One array per rank.
        """
        value = np.asarray(array)
        if self.world_size == 1:
            return [value.copy()]
        return [_array_from_bytes(blob) for blob in self.all_gather_bytes(_array_to_bytes(value))]

    def all_gather_bytes(self, blob: bytes) -> List[bytes]:
        """Every rank's bytes, in rank order (lengths may differ)."""
        if self.world_size == 1:
            return [bytes(blob)]
        lengths = self._all_gather_equal(np.array([len(blob)], dtype=np.int64))[:, 0]
        padded = np.zeros(int(lengths.max()) if len(lengths) else 0, dtype=np.uint8)
        padded[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        gathered = self._all_gather_equal(padded)
        return [gathered[index, :int(length)].tobytes() for index, length in enumerate(lengths)]

    def broadcast(self, array: Any, root: int = 0) -> np.ndarray:
        """Rank `root`'s array, on every rank."""
        value = np.asarray(array)
        if self.world_size == 1:
            return value.copy()
        return self.all_gather(value)[root]

    def concat(self, array: Any) -> np.ndarray:
        """Every rank's array concatenated along axis 0, in rank order (empty parts are skipped)."""
        parts = self.all_gather(array)
        kept = [part for part in parts if part.size or part.ndim > 1]
        return np.concatenate(kept, axis=0) if kept else parts[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(world_size={self.world_size}, rank={self.rank}, local_rank={self.local_rank})"


class LocalCommunicator(Communicator):
    """One process on its own: every collective returns its input (the default)."""

    name = "local"

    def __init__(self) -> None:
        super().__init__(world_size=1, rank=0, local_rank=0)

    def _all_reduce(self, array: np.ndarray, op: str) -> np.ndarray:
        return array.copy()

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        return array[None].copy()

    def barrier(self) -> None:
        return None


def _array_to_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _array_from_bytes(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(blob), allow_pickle=False)


_LOCAL = LocalCommunicator()
_active: Communicator = _LOCAL
_thread = threading.local()  # per-thread communicators: ranks simulated by threads (fe_core.distributed.threads)


def get_communicator() -> Communicator:
    """The active communicator (a single-process `LocalCommunicator` unless a backend installed another).

    Example:
        >>> get_communicator().world_size
        1
    """
    return getattr(_thread, "communicator", None) or _active


def set_communicator(communicator: Optional[Communicator], thread_only: bool = False) -> Communicator:
    """Install `communicator` (None: back to the single-process one); returns the previous one.

    Args:
        communicator: The communicator of this process (a backend installs one when a launcher started the process).
        thread_only: Install it for the calling thread only (ranks simulated by threads in one process).
    """
    global _active  # pylint: disable=global-statement
    previous = get_communicator()
    if thread_only:
        _thread.communicator = communicator
    else:
        _active = communicator if communicator is not None else _LOCAL
    return previous


def is_main_process() -> bool:
    """Whether this process prints logs and writes files: rank 0 of a distributed run, or a single process.

    Example:
        >>> is_main_process()
        True
    """
    return get_communicator().rank == 0


def launcher_env(environ: Optional[Dict[str, str]] = None) -> Optional[Dict[str, Any]]:
    """What a torchrun-style launcher told this process, or None when it was not started by one.

    torchrun, torch.distributed.launch, Ray Train's TorchTrainer and most cluster launchers set `RANK`,
    `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR` and `MASTER_PORT`. A world size of 1 counts as not distributed.

    Returns:
        {"rank", "world_size", "local_rank", "master_addr", "master_port"} or None.

    Raises:
        ValueError: If the variables are present but not integers, or the rank is out of range.

    Example:
        >>> launcher_env({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
        ...               "MASTER_PORT": "29500"})["rank"]
        1
        >>> launcher_env({}) is None
        True
    """
    env = os.environ if environ is None else environ
    if "WORLD_SIZE" not in env or "RANK" not in env:
        return None
    try:
        world_size, rank = int(env["WORLD_SIZE"]), int(env["RANK"])
        local_rank = int(env.get("LOCAL_RANK", rank))
    except ValueError as error:
        raise ValueError(f"The launcher's RANK/WORLD_SIZE/LOCAL_RANK must be integers: {error}") from error
    if world_size <= 1:
        return None
    if not 0 <= rank < world_size:
        raise ValueError(f"RANK={rank} is out of range for WORLD_SIZE={world_size}")
    return {"rank": rank, "world_size": world_size, "local_rank": local_rank,
            "master_addr": env.get("MASTER_ADDR", "127.0.0.1"), "master_port": env.get("MASTER_PORT", "29500")}
