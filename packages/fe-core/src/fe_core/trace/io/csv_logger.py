"""`CSVLogger`: writes the run's logged values into a CSV file, one row per epoch and mode."""
from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np
from natsort import humansorted

from fe_core.distributed.communicator import get_communicator, is_main_process
from fe_core.checkpoint.hashed_file import write_hashed_file
from fe_core.containers import to_list
from fe_core.data import Data
from fe_core.summary.summary import ValWithError
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["CSVLogger"]

_BASE_COLUMNS = ("mode", "step", "epoch")
_INSTANCE_COLUMN = "instance_id"


def _cell(value: Any) -> str:
    """How a value is written into a cell: numbers as numpy prints them, arrays as (nested) JSON lists."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, ValWithError):
        return str(value)
    if isinstance(value, (bool, int, float, np.generic)):
        return str(value)
    array = np.asarray(value)
    if array.dtype == object:
        return str(value)
    if array.size == 1:
        return str(array.reshape(-1)[0])
    return json.dumps(array.tolist())


@fe_export("fe.trace.io.csv_logger.CSVLogger", "fe.trace.io.CSVLogger")
class CSVLogger(Trace):
    """Log monitored quantities in a CSV file.

    At the end of every epoch of the modes it runs in, one row is added with the `mode`, the global `step`, the
    `epoch` and every value logged during that epoch end (metrics, mean losses, `metric|ds_id` keys, ...), or only the
    `monitor_names` when given. When the trace also runs in 'train' mode, a training row is added at every log step
    (as the Logger prints them) as well.

    Cells: numbers as numpy prints them (`0.875`); arrays of more than one element (a per-class precision, a confusion
    matrix) as JSON lists keeping their shape (`[[3, 1], [0, 4]]`, read back with `json.loads`); a key a row lacks is
    an empty cell.

    The header is every key seen so far: mode, step, epoch (and instance_id), then the keys in human-sorted order (as
    the Logger prints them: `accuracy`, `accuracy|ds1`, `ce`, ...). The file
    is brought up to date at every epoch end and at the end of the run: rows are appended while the header stays the
    same; when a new key appears, the whole file is rewritten (atomically: a temporary sibling file replaces it) with
    the wider header, so every row always has every column. `Estimator.test()` after `fit()` appends its rows to the
    file `fit()` wrote, as FastEstimator does; a new `fit()` starts the file afresh.

    With `instance_id_key`, each batch's per-instance values (written by traces with `write_per_instance_log`, or
    batch keys among `monitor_names` holding one value per sample) are also written, one row per sample, with the
    sample's id in an `instance_id` column. Such a row carries every requested key: a value that is not per sample
    (a batch mean) is repeated in each row, and a key the batch lacks is an empty cell. In a data-parallel run every process's samples are written: the processes'
    per-instance rows are gathered at each epoch end (in rank order) and rank 0 writes the file.

    Its inputs include '*', so it runs after every trace that writes outputs and sees everything they logged.

    Args:
        filename: Output filename.
        monitor_names: List of keys to monitor. If None then all metrics will be recorded. '*' stands for 'all the
            usual keys' (every logged value, and every per-instance value in instance rows), so `['*', 'y']` records
            them plus the key 'y' (in instance rows, one value per sample).
        instance_id_key: A key that holds a unique id for every sample (given by the pipeline); when set, per-instance
            values are recorded too.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".

    Example:
        >>> # Estimator(..., traces=[Accuracy("y", "y_pred"), CSVLogger("log.csv")]).fit()
        >>> # log.csv:  mode,step,epoch,accuracy,ce
        >>> #           eval,100,1,0.91,0.27
    """

    # Its rows are text written into its own file (instance ids may be file names): checkpointed as data.
    fe_text_data = ("rows", "pending_instance_rows")

    def __init__(self,
                 filename: str,
                 monitor_names: Union[None, str, Iterable[str]] = None,
                 instance_id_key: Optional[str] = None,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test")) -> None:
        if not isinstance(filename, (str, os.PathLike)) or not str(filename):
            raise ValueError(f"CSVLogger filename must be a non-empty path, got {filename!r}")
        if instance_id_key is not None and not isinstance(instance_id_key, str):
            raise ValueError(f"CSVLogger instance_id_key must be a key name (str) or None, got {instance_id_key!r}")
        self.monitor_names: List[str] = [str(name) for name in to_list(monitor_names)]
        reserved = sorted(set(self.monitor_names) & {*_BASE_COLUMNS, _INSTANCE_COLUMN})
        if reserved:
            raise ValueError(f"CSVLogger monitor_names {reserved} clash with the columns it writes itself "
                             f"{[*_BASE_COLUMNS, _INSTANCE_COLUMN]}")
        inputs = ["*"] + [name for name in self.monitor_names if name != "*"] + (
            [instance_id_key] if instance_id_key else [])
        super().__init__(inputs=inputs, mode=mode)
        self.filename = os.fspath(filename)
        self.instance_id_key = instance_id_key
        self.rows: List[Dict[str, str]] = []
        self.columns: List[str] = list(_BASE_COLUMNS)
        self._known = set(_BASE_COLUMNS)
        self.written_rows = 0  # how many of `rows` the file holds
        self.written_columns: List[str] = []  # the header the file has
        self.pending_instance_rows: List[Dict[str, str]] = []  # data-parallel: this process's rows until epoch end

    # ------------------------------------------------------------------ hooks
    def on_begin(self, data: Data) -> None:
        system = self.system
        if system.mode == "test" and os.path.exists(self.filename):
            self._read_existing()
        elif system.mode == "test" or system.epoch_idx == 0:
            self._reset()
        else:  # training resumed from a checkpoint: keep the restored rows, and rewrite the file from them
            self._known = set(self.columns)
            self.written_columns = []

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        if self.instance_id_key:
            self._add_instance_rows(data)
        if system.mode == "train":
            log_steps = system.log_steps
            step = system.global_step
            if log_steps and (step % log_steps == 0 or step == 1):
                self._add_row(data)

    def on_epoch_end(self, data: Data) -> None:
        self._gather_instance_rows()
        self._add_row(data)
        self._save()

    def on_end(self, data: Data) -> None:
        self._save()

    # ------------------------------------------------------------------ rows
    def _reset(self) -> None:
        self.pending_instance_rows = []
        self.rows = []
        self.columns = list(_BASE_COLUMNS)
        self._known = set(_BASE_COLUMNS)
        self.written_rows = 0
        self.written_columns = []

    def _read_existing(self) -> None:
        """Start from the rows already in the file (a test run after training)."""
        self._reset()
        with open(self.filename, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            header = list(reader.fieldnames or [])
            self.rows = [dict(row) for row in reader]
        self.columns = header or list(_BASE_COLUMNS)  # keep the file's column order until a new key appears
        self._known = set(self.columns)
        self.written_rows = len(self.rows)
        self.written_columns = header

    def _base(self) -> Dict[str, str]:
        system = self.system
        return {"mode": str(system.mode), "step": _cell(system.global_step or 0), "epoch": _cell(system.epoch_idx)}

    def _add(self, row: Dict[str, str]) -> None:
        if not self._known.issuperset(row):
            self._known.update(row)
            fixed = [column for column in (*_BASE_COLUMNS, _INSTANCE_COLUMN) if column in self._known]
            self.columns = fixed + humansorted(self._known.difference(fixed))
        self.rows.append(row)

    def _requested(self, usual: Iterable[str]) -> List[str]:
        """The keys to write: `monitor_names`, where '*' stands for `usual` (every logged or per-instance key, as
        without monitor_names); `usual` alone when no monitor_names were given."""
        if not self.monitor_names:
            return list(usual)
        if "*" not in self.monitor_names:
            return self.monitor_names
        extras = [name for name in self.monitor_names if name != "*"]
        return list(dict.fromkeys([*usual, *extras]))

    def _add_row(self, data: Data) -> None:
        row = self._base()
        logs = data.read_logs()
        keys = self._requested(logs)
        for key in keys:
            if key in logs:
                row[key] = _cell(logs[key])
            elif self.monitor_names:
                row[key] = ""  # a monitored key always has its column
        self._add(row)

    def _add_instance_rows(self, data: Data) -> None:
        key = self.instance_id_key
        if key not in data:
            raise KeyError(f"CSVLogger instance_id_key {key!r} is not in the batch in mode {self.system.mode!r}, epoch "
                           f"{self.system.epoch_idx}, ds_id {self.system.ds_id!r}")
        ids = np.asarray(data[key]).reshape(-1)
        count = len(ids)
        per_instance = data.read_per_instance_logs()
        names = self._requested(per_instance)
        columns: Dict[str, Any] = {}
        shared: Dict[str, str] = {}  # requested keys without one value per sample: the same cell in every row
        for name in names:
            value = per_instance[name] if name in per_instance else data[name] if name in data else None
            if value is None:
                shared[name] = ""
                continue
            array = np.asarray(value)
            if array.ndim > 0 and array.shape[0] == count:  # one value per sample
                columns[name] = array
            else:
                shared[name] = _cell(value)
        if not columns:
            return
        base = self._base()
        base.update(shared)
        add = self.pending_instance_rows.append if get_communicator().world_size > 1 else self._add
        for index in range(count):
            row = dict(base)
            row[_INSTANCE_COLUMN] = _cell(ids[index])
            for name, array in columns.items():
                value = array[index]  # a sample's own array ((N, 1) labels) as numpy prints it, as FastEstimator
                row[name] = str(value) if isinstance(value, np.ndarray) and value.dtype != object else _cell(value)
            add(row)

    def _gather_instance_rows(self) -> None:
        """Data-parallel: every process's per-instance rows of this epoch, in rank order, on every process (so the
        rows, and the checkpoints holding them, agree everywhere)."""
        communicator = get_communicator()
        if communicator.world_size == 1:
            return
        blob = json.dumps(self.pending_instance_rows).encode("utf-8")
        self.pending_instance_rows = []
        for part in communicator.all_gather_bytes(blob):
            for row in json.loads(part.decode("utf-8")):
                self._add(row)

    # ------------------------------------------------------------------ the file
    def _save(self) -> None:
        if not is_main_process():  # a data-parallel run: rank 0 writes the file
            return
        if self.written_columns == self.columns:
            if self.written_rows < len(self.rows):
                with open(self.filename, "a", newline="", encoding="utf-8") as file:
                    writer = csv.DictWriter(file, fieldnames=self.columns, restval="")
                    writer.writerows(self.rows[self.written_rows:])
        else:
            self._rewrite()
        self.written_rows = len(self.rows)
        self.written_columns = list(self.columns)

    def _rewrite(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.filename)), exist_ok=True)
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=self.columns, restval="")
        writer.writeheader()
        writer.writerows(self.rows)
        write_hashed_file(self.filename, lambda file: file.write(text.getvalue().encode("utf-8")))
