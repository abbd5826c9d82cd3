"""`TerminateOnNaN`: end training as soon as a monitored value is NaN or infinite."""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, List, Set, Union

import numpy as np

from fe_core.data import Data
from fe_core.schedule.scheduler import get_current_items
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["TerminateOnNaN"]


def _non_finite(value: Any) -> bool:
    """Whether `value` (a number or an array) holds a NaN or an infinity. Non-numeric values never do."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, (bool, numbers.Integral, str, bytes)) or value is None:
        return False
    try:
        array = np.asarray(value)
    except Exception:  # pylint: disable=broad-except  (an object numpy cannot read holds no numbers we can check)
        return False
    if array.dtype.kind not in "fc":
        return False
    return not bool(np.isfinite(array).all())


def _describe(value: Any) -> str:
    array = np.asarray(value)
    if array.size == 1:
        return str(array.reshape(()))
    nans = int(np.isnan(array).sum())
    infs = int(np.isinf(array).sum())
    return f"array of shape {array.shape} with {nans} NaN and {infs} infinite value(s)"


@fe_export("fe.trace.adapt.terminate_on_nan.TerminateOnNaN", "fe.trace.adapt.TerminateOnNaN")
class TerminateOnNaN(Trace):
    """End training when a NaN (or infinite) value is detected.

    After every batch and at the end of every epoch it checks the monitored keys present in the data. On a NaN or an
    infinity it sets `system.stop_training` (the run stops right after the current hook) and prints, for each such
    key, a line like

    ```
    FastEstimator-TerminateOnNaN: NaN Detected in: ce at step 17 (mode train, epoch 2, batch 5); value: nan
    FastEstimator-TerminateOnNaN: NaN Detected in: ce at the end of epoch 2 (mode eval, step 20); value: inf
    ```

    Args:
        monitor_names: Key(s) to check. None checks every loss of the network (the loss_name of each UpdateOp); '*'
            checks the losses plus every output of the traces running in the current mode and epoch. Named keys may be
            losses and/or other traces' outputs (such as an accuracy); the trace then runs after the traces writing
            them.
        mode: Mode(s) to run in; None for all.
        ds_id: Dataset id(s) to run on; None for all; '!ds1' for all but ds1.

    Example:
        >>> # Estimator(..., traces=[TerminateOnNaN()])  # stop on the first NaN loss
    """

    def __init__(self,
                 monitor_names: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=monitor_names, mode=mode, ds_id=ds_id)
        self.monitor_keys: List[str] = []

    def on_epoch_begin(self, data: Data) -> None:
        keys: Set[str]
        system = self.system
        if not self.inputs:
            keys = set(system.network.get_loss_keys())
        elif "*" in self.inputs:
            keys = set(system.network.get_loss_keys())
            for trace in get_current_items(system.traces, run_modes=system.mode, epoch=system.epoch_idx):
                keys.update(trace.outputs)
            keys.update(key for key in self.inputs if key != "*")
        else:
            keys = set(self.inputs)
        self.monitor_keys = sorted(keys)

    def _check(self, data: Data, epoch_end: bool) -> None:
        for key in self.monitor_keys:
            if key in data:
                value = data[key]
                if _non_finite(value):
                    self._stop(key, value, epoch_end)

    def _stop(self, key: str, value: Any, epoch_end: bool) -> None:
        system = self.system
        system.stop_training = True
        ds = f", ds_id {system.ds_id!r}" if system.ds_id else ""
        if epoch_end:
            where = f"at the end of epoch {system.epoch_idx} (mode {system.mode}, step {system.global_step}{ds})"
        else:
            where = (f"at step {system.global_step} (mode {system.mode}, epoch {system.epoch_idx}, batch "
                     f"{system.batch_idx}{ds})")
        print(f"FastEstimator-TerminateOnNaN: NaN Detected in: {key} {where}; value: {_describe(value)}")

    def on_batch_end(self, data: Data) -> None:
        self._check(data, epoch_end=False)

    def on_epoch_end(self, data: Data) -> None:
        self._check(data, epoch_end=True)
