"""Per-rank checkpoint state: what differs between the ranks of a data-parallel run.

Weights and optimizer state are the same on every rank (DDP / MirroredStrategy keep them so), so rank 0 writes them
once. What differs is each rank's random state (python, numpy, the framework's: every rank draws its own
augmentations and dropout masks) and the traces' partial statistics of an unfinished epoch. `gather_rank_states`
brings every rank's copy of those to rank 0, which stores them all in its checkpoint (entry `ranks`); on restore
each rank takes its own entry back, so a multi-process run killed mid-epoch resumes exactly (with the same number
of processes). The transfer uses the checkpoint codec (JSON + numpy arrays), never pickle.
"""
from __future__ import annotations

import io
import json
from typing import Any, Dict, List, Optional

import numpy as np

from fe_core.distributed.communicator import Communicator, get_communicator

__all__ = ["gather_rank_states", "rank_entry"]


def _encode(state: Dict[str, Any]) -> bytes:
    from fe_core.checkpoint.codec import StateCodec  # pylint: disable=import-outside-toplevel
    data, arrays = StateCodec().encode(state, path="ranks")
    buffer = io.BytesIO()
    np.savez(buffer, __json__=np.array(json.dumps(data)), **arrays)
    return buffer.getvalue()


def _decode(blob: bytes) -> Dict[str, Any]:
    from fe_core.checkpoint.codec import StateCodec  # pylint: disable=import-outside-toplevel
    with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
        data = json.loads(str(archive["__json__"]))
        arrays = {name: archive[name] for name in archive.files if name != "__json__"}
    return StateCodec().decode(data, arrays, path="ranks")


def gather_rank_states(local: Dict[str, Any], communicator: Optional[Communicator] = None
                       ) -> Optional[List[Dict[str, Any]]]:
    """Every rank's `local` state, in rank order, on rank 0 (None on the other ranks, and in a single process).

    Every rank must call it (it is a collective).
    """
    comm = communicator or get_communicator()
    if comm.world_size == 1:
        return None
    blobs = comm.all_gather_bytes(_encode(local))
    return [_decode(blob) for blob in blobs] if comm.is_main else None


def rank_entry(ranks: Any, where: str, communicator: Optional[Communicator] = None) -> Optional[Dict[str, Any]]:
    """This rank's entry of a checkpoint's `ranks` list (None when the checkpoint has none and this is one process).

    Raises:
        ValueError: If the checkpoint was written by a different number of processes.
    """
    comm = communicator or get_communicator()
    if ranks is None:
        if comm.world_size > 1:
            raise ValueError(f"Checkpoint {where!r} was written by a single process; this run has {comm.world_size} "
                             f"processes (resume with the same number of processes)")
        return None
    if not isinstance(ranks, list) or len(ranks) != comm.world_size:
        count = len(ranks) if isinstance(ranks, list) else "?"
        raise ValueError(f"Checkpoint {where!r} was written by {count} processes; this run has {comm.world_size} "
                         f"(resume with the same number of processes)")
    entry = ranks[comm.rank]
    if not isinstance(entry, dict):
        raise ValueError(f"Checkpoint {where!r}: ranks[{comm.rank}] should be a dict")
    return entry
