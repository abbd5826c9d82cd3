"""Schedulers: values (ops, traces, batch sizes, datasets, optimizers) that change with the epoch."""
from __future__ import annotations

import math
from typing import Any, Dict, Generic, Iterable, List, Optional, Sequence, TypeVar, Union

from fe_core.config_error import ConfigurationError
from fe_core.containers import to_set
from fe_core.modes import ds_id_matches
from fe_core.export import fe_export

T = TypeVar("T")

__all__ = ["ScheduleError", "Scheduler", "EpochScheduler", "RepeatScheduler", "get_current_items", "get_signature_epochs"]


class ScheduleError(ConfigurationError):
    """An invalid scheduler argument (FastEstimator raises AssertionError there; this is both)."""


@fe_export("fe.schedule.schedule.Scheduler", "fe.schedule.Scheduler")
class Scheduler(Generic[T]):
    """The base class of everything whose value depends on the epoch (epochs count from 1)."""

    def get_current_value(self, epoch: int) -> Optional[T]:
        """The value in force at `epoch`."""
        raise NotImplementedError

    def get_all_values(self) -> List[Optional[T]]:
        """Every value this scheduler can produce (None included)."""
        raise NotImplementedError


@fe_export("fe.schedule.schedule.EpochScheduler", "fe.schedule.EpochScheduler")
class EpochScheduler(Scheduler[T]):
    """A value that changes at given epochs and stays until the next change.

    Args:
        epoch_dict: Maps the epoch at which a value starts to the value. Before the first key the value is None; a
            None value switches the item off from its epoch on.

    Raises:
        AssertionError: If `epoch_dict` is not a non-empty dict or a key is not a positive integer (a
            `ScheduleError`, which is also a ValueError).

    Example:
        >>> s = EpochScheduler({1: "adam", 3: "sgd"})
        >>> [s.get_current_value(e) for e in (1, 2, 3, 9)]
        ['adam', 'adam', 'sgd', 'sgd']
    """

    def __init__(self, epoch_dict: Dict[int, Optional[T]]) -> None:
        if not isinstance(epoch_dict, dict) or not epoch_dict:
            raise ScheduleError(f"EpochScheduler needs a non-empty dict of epoch -> value, got {epoch_dict!r}")
        for key in epoch_dict:
            if isinstance(key, bool) or not isinstance(key, int) or key < 1:
                raise ScheduleError(f"EpochScheduler keys must be positive integers (epochs count from 1), got {key!r}")
        self.epoch_dict = dict(sorted(epoch_dict.items()))
        self.keys = list(self.epoch_dict)

    def get_current_value(self, epoch: int) -> Optional[T]:
        value = None
        for key in self.keys:
            if key > epoch:
                break
            value = self.epoch_dict[key]
        return value

    def get_all_values(self) -> List[Optional[T]]:
        return list(self.epoch_dict.values())

    def __repr__(self) -> str:
        return f"EpochScheduler({self.epoch_dict!r})"


@fe_export("fe.schedule.schedule.RepeatScheduler", "fe.schedule.RepeatScheduler")
class RepeatScheduler(Scheduler[T]):
    """A value that cycles through a list, one element per epoch.

    Args:
        repeat_list: The values; epoch 1 takes the first, epoch `len(repeat_list) + 1` the first again.

    Raises:
        AssertionError: If `repeat_list` is not a non-empty list (a `ScheduleError`, which is also a ValueError).

    Example:
        >>> s = RepeatScheduler(["a", "b"])
        >>> [s.get_current_value(e) for e in (1, 2, 3)]
        ['a', 'b', 'a']
    """

    def __init__(self, repeat_list: Sequence[Optional[T]]) -> None:
        if not isinstance(repeat_list, (list, tuple)) or not repeat_list:
            raise ScheduleError(f"RepeatScheduler needs a non-empty list, got {repeat_list!r}")
        self.repeat_list = list(repeat_list)
        self.cycle_length = len(self.repeat_list)

    def get_current_value(self, epoch: int) -> Optional[T]:
        return self.repeat_list[(epoch - 1) % self.cycle_length]

    def get_all_values(self) -> List[Optional[T]]:
        return list(self.repeat_list)

    def __repr__(self) -> str:
        return f"RepeatScheduler({self.repeat_list!r})"


def _runs_in(item: Any, run_modes: set, ds_ids: Optional[List[str]]) -> bool:
    if run_modes:
        item_modes = getattr(item, "mode", None)
        if item_modes and not (item_modes & run_modes):
            return False
    if ds_ids is not None:
        item_ds_ids = getattr(item, "ds_id", None)
        if item_ds_ids and not any(ds_id_matches(item_ds_ids, ds_id) for ds_id in ds_ids):
            return False
    return True


@fe_export("fe.schedule.schedule.get_current_items", "fe.schedule.get_current_items")
def get_current_items(items: Iterable[Union[T, Scheduler[T], None]],
                      run_modes: Union[None, str, Iterable[str]] = None,
                      epoch: Optional[int] = None,
                      ds_id: Union[None, str, Iterable[str]] = None) -> List[T]:
    """Select the items that run in the given mode(s), epoch and dataset.

    Schedulers are resolved at `epoch` (or expanded to all their values when `epoch` is None); None values are
    dropped; items with a `mode` attribute must share a mode with `run_modes`, and items with a `ds_id` attribute must
    accept `ds_id`.

    Args:
        items: Items and schedulers of items.
        run_modes: The mode(s) to select for; None selects every mode.
        epoch: The epoch to resolve schedulers at; None takes every scheduled value.
        ds_id: The dataset id(s) to select for ('' is the unnamed dataset of a mode, which matches no whitelist such
            as 'ds1' but every blacklist such as '!ds1'); several ids select items running in any of them; None selects
            every dataset.

    Returns:
        The selected items, in their original order.

    Example:
        >>> get_current_items([EpochScheduler({1: "a", 3: None}), "b"], epoch=3)
        ['b']
    """
    modes = to_set(run_modes)
    ds_ids = None if ds_id is None else [ds_id] if isinstance(ds_id, str) else list(ds_id)
    selected: List[T] = []
    for item in items:
        if isinstance(item, Scheduler):
            candidates = item.get_all_values() if epoch is None else [item.get_current_value(epoch)]
        else:
            candidates = [item]
        for candidate in candidates:
            if candidate is not None and _runs_in(candidate, modes, ds_ids):
                selected.append(candidate)
    return selected


@fe_export("fe.schedule.schedule.get_signature_epochs", "fe.schedule.get_signature_epochs")
def get_signature_epochs(items: List[Any],
                         total_epochs: int,
                         mode: Union[None, str, Iterable[str]] = None,
                         ds_id: Optional[str] = None) -> List[int]:
    """The epochs at which a new combination of the scheduled `items` first appears.

    Running one step at each signature epoch exercises every configuration training will meet (this is what warmup
    does).

    Args:
        items: Items and schedulers.
        total_epochs: How many epochs training runs.
        mode: The mode(s) to consider.
        ds_id: The dataset id to consider.

    Returns:
        The sorted signature epochs.

    Example:
        >>> get_signature_epochs([RepeatScheduler(["a", "b", "c", "c"]), EpochScheduler({1: "a", 2: "b", 30: None})], 50)
        [1, 2, 3, 5, 30, 31, 33]
    """
    schedulers = [item for item in items if isinstance(item, Scheduler)]
    if not schedulers:
        return [1] if total_epochs >= 1 else []
    # A configuration can only change at an EpochScheduler key or inside one cycle of every RepeatScheduler after it.
    cycle = 1
    change_points = {1}
    for scheduler in schedulers:
        if isinstance(scheduler, RepeatScheduler):
            cycle = cycle * scheduler.cycle_length // math.gcd(cycle, scheduler.cycle_length)
        elif isinstance(scheduler, EpochScheduler):
            change_points.update(scheduler.keys)
    if any(not isinstance(s, (RepeatScheduler, EpochScheduler)) for s in schedulers):
        candidates = range(1, total_epochs + 1)  # unknown scheduler kinds: look at every epoch
    else:
        candidate_set = set()
        for start in change_points:
            candidate_set.update(range(start, min(start + cycle, total_epochs + 1)))
        candidates = sorted(candidate_set)
    seen: List[List[int]] = []
    signature: List[int] = []
    for epoch in candidates:
        config = [id(x) for x in get_current_items(items, run_modes=mode, epoch=epoch, ds_id=ds_id)]
        if config not in seen:
            seen.append(config)
            signature.append(epoch)
    return signature
