"""`DataSource`: what the Estimator asks of its data (the Pipeline is the implementation fe ships).

The Estimator talks to this interface only, never probing its data source for optional methods: a loader context
per (mode, epoch, ds_id) handing out numpy batches, the block that keeps worker processes for a whole run, the modes,
ds_ids and epochs with data, the scheduled items that shape each mode's configurations, the number of steps of an
epoch, and the mid-epoch position a restored checkpoint continues from.
"""
from __future__ import annotations

from typing import Any, ContextManager, Dict, Iterable, List, Optional, Protocol, Set, runtime_checkable

__all__ = ["DataContext", "DataSource"]


class DataContext(Protocol):
    """One epoch's loader context: `with source(...).as_numpy() as loader: for batch in loader: ...`."""

    def as_numpy(self) -> "DataContext":
        """This context, handing out batches of numpy arrays (the Estimator's fast path)."""

    def __enter__(self) -> Iterable[Dict[str, Any]]:
        ...

    def __exit__(self, *exc_info: Any) -> None:
        ...


@runtime_checkable
class DataSource(Protocol):
    """The data an Estimator trains, evaluates and tests on.

    Attributes:
        ops: The data source's ops (checked for ds_ids that name no dataset).
    """

    ops: List[Any]

    def __call__(self, mode: str, epoch: int = 1, ds_id: str = "", shuffle: Optional[bool] = None,
                 steps_per_epoch: Optional[int] = None, output_keys: Optional[Set[str]] = None,
                 warmup: bool = False) -> DataContext:
        """The loader context of one epoch of `mode` / `ds_id`."""

    def workers(self) -> ContextManager[None]:
        """A block that keeps the data source's worker processes for every epoch iterated inside it."""

    def get_modes(self, epoch: Optional[int] = None) -> Set[str]:
        """The modes with data (at `epoch`, when given)."""

    def get_ds_ids(self, epoch: int, mode: str) -> List[str]:
        """The sorted ds_ids with data in `mode` at `epoch`."""

    def get_epochs_with_data(self, total_epochs: int, mode: str) -> Set[int]:
        """The epochs in 1..total_epochs at which `mode` has data."""

    def get_scheduled_items(self, mode: str) -> List[Any]:
        """Everything whose schedule shapes `mode`'s data."""

    def get_num_steps(self, mode: str, epoch: int, ds_id: str = "", steps_per_epoch: Optional[int] = None
                      ) -> Optional[int]:
        """How many batches an epoch yields (None when unknown)."""

    def get_resume_position(self) -> Any:
        """The mid-epoch position a restored checkpoint continues from (with `mode`, `epoch`, `ds_id`), or None."""
