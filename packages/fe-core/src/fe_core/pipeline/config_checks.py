"""What a Pipeline checks when it is built: its datasets, batch size, ops and Batch ops, and the settings that only
apply to fe datasets, refused or warned about when framework loaders are given (as FastEstimator does)."""
from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List

from fe_core.config_error import ConfigurationTypeError
from fe_core.modes import check_ds_id
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.pipeline.planner import PipelineConfigError, is_native_dataset
from fe_core.schedule.scheduler import EpochScheduler, RepeatScheduler, Scheduler, get_current_items, \
    get_signature_epochs

__all__ = ["register_data", "check_batch_size", "check_ops", "check_framework_sources", "check_batch_ops",
           "is_positive_int", "DATA_MODES"]

DATA_MODES = ("train", "eval", "test")


def is_positive_int(value: Any) -> bool:
    """Whether `value` is an int (not a bool) of at least 1."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_dataset(mode: str, ds_id: str, dataset: Any) -> None:
    if dataset is None or isinstance(dataset, Scheduler):
        values = dataset.get_all_values() if isinstance(dataset, Scheduler) else []
        for value in values:
            if isinstance(value, (Scheduler, dict)):
                raise TypeError(f"Pipeline {mode} data{f' {ds_id!r}' if ds_id else ''}: a Scheduler must hold "
                                f"datasets; to schedule per ds_id use {{ds_id: Scheduler}}")
            if value is not None:
                _check_dataset(mode, ds_id, value)
        return
    if isinstance(dataset, (str, bytes)) or not (hasattr(dataset, "__iter__") or hasattr(dataset, "__getitem__")):
        raise TypeError(f"Pipeline {mode} data{f' {ds_id!r}' if ds_id else ''} is a {type(dataset).__name__}, "
                        f"not a dataset (an object with __len__ and __getitem__ returning dicts) or a framework "
                        f"loader")


def register_data(mode: str, data: Any) -> Dict[str, Any]:
    """`{ds_id: dataset}` of one mode's data (a plain dataset under ''), checked.

    Raises:
        ValueError: On an empty dict; PipelineConfigError on a bad ds_id.
        TypeError: If data is not a dataset.
    """
    if isinstance(data, dict):
        if not data:
            raise ValueError(f"Pipeline {mode}_data is an empty dict; give at least one {{ds_id: dataset}}")
        for ds_id, dataset in data.items():
            if not isinstance(ds_id, str) or ds_id.startswith("!"):
                raise PipelineConfigError(f"Pipeline {mode}_data ds_id {ds_id!r} must be a string not starting "
                                          f"with '!'")
            check_ds_id({ds_id})
            _check_dataset(mode, ds_id, dataset)
        return dict(data)
    _check_dataset(mode, "", data)
    return {"": data}


def check_batch_size(batch_size: Any) -> None:
    """Refuse a batch_size that is not a positive int (or None, a Scheduler or a dict per mode of those)."""
    def check_one(value: Any, where: str) -> None:
        values = value.get_all_values() if isinstance(value, Scheduler) else [value]
        for item in values:
            if item is not None and not is_positive_int(item):
                raise ValueError(f"Pipeline batch_size{where} must be a positive integer (or None), got {item!r}")

    if isinstance(batch_size, dict):
        for mode, value in batch_size.items():
            if mode not in DATA_MODES:
                raise ValueError(f"Pipeline batch_size keys must be modes {list(DATA_MODES)}, got {mode!r}")
            check_one(value, f"[{mode!r}]")
    else:
        check_one(batch_size, "")


def check_ops(ops: List[Any]) -> None:
    """Refuse anything but NumpyOps (and Schedulers of NumpyOps)."""
    for position, item in enumerate(ops):
        values = item.get_all_values() if isinstance(item, Scheduler) else [item]
        for op in values:
            if op is not None and not isinstance(op, NumpyOp):
                raise ConfigurationTypeError(f"Pipeline ops must be NumpyOps (or Schedulers of NumpyOps), got "
                                f"{type(op).__name__} at position {position}")


def _sources(data: Dict[str, Dict[str, Any]]) -> List[Any]:
    """Every dataset the Pipeline holds (the values of Schedulers included)."""
    sources = []
    for datasets in data.values():
        for dataset in datasets.values():
            values = dataset.get_all_values() if isinstance(dataset, Scheduler) else [dataset]
            sources.extend(value for value in values if value is not None)
    return sources


def check_framework_sources(data: Dict[str, Dict[str, Any]], batch_size: Any, ops: Any, num_process: Any
                            ) -> None:
    """Refuse `batch_size`, `ops` and `num_process` when every source is a framework loader (a torch DataLoader, a
    tf.data.Dataset: already batched, they never run them), as FastEstimator does; warn when some sources are fe
    datasets (there they apply)."""
    sources = _sources(data)
    native = [source for source in sources if is_native_dataset(source)]
    if not native:
        return
    given = [name for name, value in (("batch_size", batch_size), ("ops", ops), ("num_process", num_process))
             if value is not None]
    kinds = sorted({type(source).__name__ for source in native})
    if len(native) == len(sources):
        if given:
            raise PipelineConfigError(f"Pipeline {', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} "
                                      f"to fe datasets, but every data source is a framework loader ({kinds}), "
                                      f"which is already batched and preprocessed: batch and preprocess it "
                                      f"yourself, or give an fe dataset")
        return
    for name in given:
        warnings.warn(f"Pipeline {name} only applies to the fe datasets, not to the framework loaders ({kinds})",
                      UserWarning, stacklevel=3)


def check_batch_ops(data: Dict[str, Dict[str, Any]], ops: List[Any]) -> None:
    """Refuse two Batch ops for one epoch, mode and ds_id (as FastEstimator does, when the Pipeline is built)."""
    batch_items = [item for item in ops if isinstance(item, Batch) or (
        isinstance(item, Scheduler) and any(isinstance(value, Batch) for value in item.get_all_values()))]
    if len(batch_items) < 2:
        return
    schedulers = [item for item in batch_items if isinstance(item, Scheduler)]
    horizon = 1
    for scheduler in schedulers:
        if isinstance(scheduler, EpochScheduler):
            horizon = max(horizon, max(scheduler.epoch_dict))
        elif not isinstance(scheduler, RepeatScheduler):
            horizon = max(horizon, 100)  # an unknown kind of Scheduler: look at its first 100 epochs
    cycle = 1
    for scheduler in schedulers:
        if isinstance(scheduler, RepeatScheduler):
            cycle = cycle * scheduler.cycle_length // math.gcd(cycle, scheduler.cycle_length)
    epochs = get_signature_epochs(batch_items, horizon + cycle) if schedulers else [1]
    for mode, datasets in data.items():
        ds_ids = set(datasets)
        for dataset in datasets.values():
            values = dataset.get_all_values() if isinstance(dataset, Scheduler) else [dataset]
            for value in values:
                if value is not None and callable(getattr(value, "sub_ds_ids", None)):
                    ds_ids.update(value.sub_ds_ids(""))  # an InterleaveDataset's named members
        for ds_id in sorted(ds_ids):
            for epoch in epochs:
                active = [op for op in get_current_items(batch_items, run_modes=mode, epoch=epoch, ds_id=ds_id)
                          if isinstance(op, Batch)]
                if len(active) > 1:
                    raise PipelineConfigError(f"Pipeline has {len(active)} Batch ops for mode {mode!r}, epoch "
                                              f"{epoch}, ds_id {ds_id!r}: you may provide at most 1 Batch op for "
                                              f"a given epoch/mode/ds_id combination")
