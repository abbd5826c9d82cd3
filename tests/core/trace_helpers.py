"""Helpers for the trace tests: drive a trace's hooks as the Estimator does, with a fe_core System and numpy data."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np

from fe_core.data import Data, DSData
from fe_core.summary.system import System
from fe_core.trace import PerDSTrace, Trace


def make_system(trace: Trace, mode: str = "eval", epoch: int = 1, network: Any = None) -> System:
    """A System for `trace` (assigned to `trace.system`) in `mode` at `epoch`."""
    system = System(network=network, pipeline=None, traces=[trace], mode=mode, ds_id="")
    system.epoch_idx = epoch
    system.global_step = 1
    trace.system = system
    return system


def run_epoch(trace: Trace, batches: Sequence[Mapping[str, Any]] = (),
              per_ds: Optional[Dict[str, Sequence[Mapping[str, Any]]]] = None, mode: str = "eval", epoch: int = 1,
              system: Optional[System] = None, end_logs: Optional[Mapping[str, Any]] = None) -> Data:
    """Run one epoch of `trace` over batches of numpy data (dicts); return the epoch-end Data.

    `end_logs` are values other traces logged before this one's on_epoch_end (metrics, for example).
    """
    if system is None:
        system = make_system(trace, mode=mode, epoch=epoch)
    system.mode, system.epoch_idx = mode, epoch
    datasets = per_ds if per_ds is not None else {"": batches}
    trace.on_epoch_begin(Data())
    end_data = Data()
    for ds_id, ds_batches in datasets.items():
        system.ds_id = ds_id
        if isinstance(trace, PerDSTrace):
            trace.on_ds_begin(Data())
        for idx, batch in enumerate(ds_batches):
            system.batch_idx = idx + 1
            data = Data({key: np.asarray(value) if isinstance(value, (list, tuple)) else value
                         for key, value in batch.items()})
            trace.on_batch_begin(data)
            trace.on_batch_end(data)
        if isinstance(trace, PerDSTrace):
            trace.on_ds_end(DSData(ds_id, end_data) if ds_id else end_data)
    system.ds_id = ""
    for key, value in (end_logs or {}).items():
        end_data.write_with_log(key, value)
    trace.on_epoch_end(end_data)
    return end_data
