"""`EpochPosition`: where the Pipeline is inside an epoch, so a checkpoint taken mid-epoch resumes exactly.

When an epoch's iteration starts, the tracker records numpy's global random state (everything the Pipeline draws —
the shuffle permutation, random ops — comes from it) and then counts the batches handed out. A checkpoint stores
that record. On resume, the same (mode, epoch, ds_id) iteration starts from the recorded random state, replays the
pipeline (not the network) for the batches already trained on, and then puts back the random state the checkpoint
restored, so batch N+1 is the batch an uninterrupted run would have produced.

Replaying only re-runs the pipeline's own work; it is exact because an epoch takes all its draws from numpy's global
random state when it starts (the index-map seed, the order, the epoch's key: see `fe_core.pipeline.loader`), whatever
runs its tasks, and everything later (further passes, every task's randomness) derives from them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, Optional

import numpy as np

__all__ = ["EpochPosition", "PositionTracker"]


@dataclass
class EpochPosition:
    """The epoch being iterated and how many batches it has handed out.

    Attributes:
        mode: The mode.
        epoch: The epoch.
        ds_id: The dataset id.
        rng: numpy's global random state when the epoch's iteration started (`np.random.get_state()`).
        batches: The number of batches handed out so far.
    """
    mode: str
    epoch: int
    ds_id: str
    rng: Any
    batches: int = 0

    def get_state(self) -> Dict[str, Any]:
        """Plain data for checkpoints."""
        return {"mode": self.mode, "epoch": self.epoch, "ds_id": self.ds_id, "rng": list(self.rng),
                "batches": self.batches}

    @staticmethod
    def from_state(state: Dict[str, Any]) -> "EpochPosition":
        """Rebuild a position from `get_state()`'s output."""
        name, keys, pos, has_gauss, cached = state["rng"]
        rng = (str(name), np.asarray(keys, dtype=np.uint32), int(pos), int(has_gauss), float(cached))
        return EpochPosition(str(state["mode"]), int(state["epoch"]), str(state["ds_id"]), rng, int(state["batches"]))


class PositionTracker:
    """Follows the Pipeline's active epoch and replays a restored position once."""

    def __init__(self) -> None:
        self.active: Optional[EpochPosition] = None
        self.resume: Optional[EpochPosition] = None

    def track(self, mode: str, epoch: int, ds_id: str, batches: Iterator[Dict[str, Any]]
              ) -> Iterator[Dict[str, Any]]:
        """Yield `batches`, counting them; first fast-forward to a pending resume position of this epoch."""
        resume = self.resume
        if resume is not None and (resume.mode, resume.epoch, resume.ds_id) == (mode, epoch, ds_id):
            self.resume = None
            restored = np.random.get_state()
            np.random.set_state(resume.rng)
            position = EpochPosition(mode, epoch, ds_id, resume.rng)
            for _ in range(resume.batches):
                if next(batches, None) is None:
                    break
                position.batches += 1
            np.random.set_state(restored)
        else:
            position = EpochPosition(mode, epoch, ds_id, np.random.get_state())
        self.active = position
        try:
            for batch in batches:
                position.batches += 1
                yield batch
        finally:
            if self.active is position:
                self.active = None

    def get_state(self) -> Dict[str, Any]:
        """The active epoch's position ({} between epochs)."""
        return {"position": self.active.get_state()} if self.active is not None else {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Arrange for the next iteration of the saved epoch to continue where the checkpoint was taken."""
        self.active = None
        self.resume = EpochPosition.from_state(state["position"]) if state.get("position") else None

    def pending_resume(self) -> Optional[EpochPosition]:
        """The restored position that the next matching epoch will continue from, if any."""
        return self.resume
