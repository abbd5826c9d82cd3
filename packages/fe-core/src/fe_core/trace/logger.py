"""`Logger`: prints the run's log lines in the FastEstimator format and records every logged value in the Summary."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, DefaultDict, Dict, List, Tuple

import numpy as np
from natsort import humansorted

from fe_core.data import Data
from fe_core.distributed.communicator import is_main_process
from fe_core.summary.summary import ValWithError
from fe_core.trace.trace import Trace
from fe_core.util.inspection import to_number
from fe_core.export import fe_export

__all__ = ["Logger", "readable_number", "SIGNIFICANT_DIGITS"]


#: Significant digits of a floating-point value on a log line (float32's precision; the Summary keeps every digit).
SIGNIFICANT_DIGITS = 7


def readable_number(value: Any) -> str:
    """A logged scalar as printed on a log line: floating-point numbers with at most `SIGNIFICANT_DIGITS`
    significant digits (`0.24233983286908078` -> '0.2423398', `7.450580596923828e-09` -> '7.450581e-09'), anything
    else as numpy prints it. `fe logs` (fe_core.summary.logs) reads every form back.

    Example:
        >>> readable_number(np.float64(0.24233983286908078)), readable_number(0.00025075000000000005)
        ('0.2423398', '0.00025075')
        >>> readable_number(np.float32(0.73)), readable_number(np.int64(12)), readable_number(float("nan"))
        ('0.73', '12', 'nan')
        >>> readable_number(1.0), readable_number(np.float32(250.0)), readable_number(1e-09)
        ('1.0', '250.0', '1e-09')
        >>> readable_number(123456789.123), readable_number(np.float16(0.1)), readable_number(1e20)
        ('123456800.0', '0.1', '1e+20')
    """
    array = np.asarray(value)
    scalar = array[()]
    text = str(scalar)
    if array.dtype.kind == "f" and np.isfinite(array):
        # numpy's own notation (positional below 1e16, '1e-05' below 1e-4; a whole number stays '1.0': log readers
        # tell them apart) and its shortest digits for the value's type (float16 0.1 is '0.1'), capped at 7 digits
        if "e" in text:
            return np.format_float_scientific(scalar, precision=SIGNIFICANT_DIGITS - 1, unique=True, trim="-")
        return np.format_float_positional(scalar, precision=SIGNIFICANT_DIGITS, unique=True, fractional=False,
                                          trim="0")
    return text


@fe_export("fe.trace.trace.Logger", "fe.trace.Logger")
class Logger(Trace):
    """A Trace that prints log messages, in the exact FastEstimator 1.x format, to stdout.

    Lines it prints (keys human-sorted, floating-point values with 7 significant digits, other values as numpy
    prints them):

    ```
    FastEstimator-Start: step: 1; logging_interval: 20; num_device: 0;
    FastEstimator-Train: step: 20; ce: 0.73; steps/sec: 7.1;
    FastEstimator-Train: step: 60; epoch: 1; epoch_time(sec): 8.1;
    Eval Progress: 1/3;
    FastEstimator-Eval: step: 60; epoch: 1; ce: 0.51;
    FastEstimator-Finish: step: 60; model_lr: 0.001; total_time(sec): 9.3;
    FastEstimator-Test: step: 60; epoch: 1; accuracy: 0.98;
    ```

    Train step lines appear at `global_step % log_steps == 0` and at step 1 (never when `log_steps` is 0); eval
    progress lines at the eval log steps, with ` (ds_id)` after 'Eval Progress' for a named dataset. An array value
    with more than one element is printed after the line as `\\nkey:\\n[...];`. Every logged value (and the epoch, on
    epoch lines) is also written into the Summary through `system.write_summary`.

    In a data-parallel run every rank records its Summary but only rank 0 prints. Training step lines show rank 0's
    values of its own part of the global batch; epoch-end evaluation and test values are over every rank's samples.

    Please don't add this trace to an Estimator yourself: the Estimator adds it unless `log_steps` is None.

    Its input '*' makes it run after every other trace; it reads only the logged values (`data.read_logs()`).
    """

    fe_log_steps_only = True  # in training, on_batch_end prints only on log steps

    def __init__(self) -> None:
        super().__init__(inputs="*")
        self._eval_steps: DefaultDict[str, int] = defaultdict(int)
        # The human-sorted order of each set of logged keys seen so far: natsort builds its locale-aware key function
        # anew on every call, which costs more than the rest of a log line, and lines repeat the same keys.
        self._key_orders: Dict[Tuple[str, ...], List[str]] = {}

    def on_begin(self, data: Data) -> None:
        if self.system.mode != "test":
            self._print_message(f"FastEstimator-Start: step: {self.system.global_step or 1}; ", data)

    def on_epoch_begin(self, data: Data) -> None:
        if self.system.mode == "eval":
            self._eval_steps = defaultdict(int)

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        mode = system.mode
        if mode == "train":
            log_steps = system.log_steps
            if log_steps and (system.global_step % log_steps == 0 or system.global_step == 1):
                self._print_message(f"FastEstimator-Train: step: {system.global_step}; ", data)
        elif mode == "eval":
            ds_id = system.ds_id
            step = self._eval_steps[ds_id] + 1
            self._eval_steps[ds_id] = step
            log_steps, total = system.eval_log_steps
            if step in log_steps:
                ds_str = f" ({ds_id})" if ds_id else ""
                self._print_message(f"Eval Progress{ds_str}: {step}/{total}; ", data)

    def on_epoch_end(self, data: Data) -> None:
        mode = self.system.mode
        if mode == "train":
            self._print_message(f"FastEstimator-Train: step: {self.system.global_step}; ", data, log_epoch=True)
        elif mode == "eval":
            self._print_message(f"FastEstimator-Eval: step: {self.system.global_step}; ", data, log_epoch=True)
        elif mode == "test":
            if self.system.global_step is None:  # nothing was trained in this run: no step or epoch to claim
                self._print_message("FastEstimator-Test: step: 0; ", data)
            else:
                self._print_message(f"FastEstimator-Test: step: {self.system.global_step}; ", data, log_epoch=True)

    def on_end(self, data: Data) -> None:
        if self.system.mode != "test":
            self._print_message(f"FastEstimator-Finish: step: {self.system.global_step}; ", data)

    def _print_message(self, header: str, data: Data, log_epoch: bool = False) -> None:
        """Print one log line and record the logged values in the System's Summary.

        Args:
            header: The start of the line ('FastEstimator-Train: step: 20; ').
            data: The Data whose logged values (`read_logs`) are printed and recorded.
            log_epoch: Whether to add (and record) the epoch.
        """
        system = self.system
        parts = [header]
        if log_epoch:
            parts.append(f"epoch: {system.epoch_idx}; ")
            system.write_summary("epoch", system.epoch_idx)
        deferred: List[str] = []
        logs = data.read_logs()
        keys = tuple(logs)
        order = self._key_orders.get(keys)
        if order is None:
            if len(self._key_orders) >= 64:  # keys that keep changing: don't let the cache grow without bound
                self._key_orders.clear()
            order = self._key_orders[keys] = humansorted(keys)
        for key in order:
            val = logs[key]
            if isinstance(val, ValWithError):
                # FastEstimator's '(low, value, high)', each number as readable as a plain value
                parts.append(f"{key}: ({', '.join(readable_number(to_number(part)[()]) for part in val)}); ")
            else:
                val = to_number(val)  # a framework tensor (a torch one that requires grad too) as numpy
                if val.size > 1:
                    deferred.append(f"\n{key}:\n{np.array2string(val, separator=',')};")
                else:
                    if val.ndim:
                        val = val.reshape(())
                    # printed as numpy prints its dtype (float32 '0.7793143'), recorded as a plain Python number
                    # (the same value), so a printed history reads {45: 0.79...}, not {45: np.float64(0.79...)}
                    parts.append(f"{key}: {readable_number(val[()])}; ")
                    val = val.item() if val.dtype.kind in "biuf" else val[()]
            system.write_summary(key, val)
        if is_main_process():  # every rank records its Summary; only rank 0 of a data-parallel run prints
            print("".join(parts).strip() + "".join(deferred))
