"""`EarlyStopping`: stop training when a monitored value has stopped improving."""
from __future__ import annotations

import math
from typing import Any, Iterable, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["EarlyStopping"]


@fe_export("fe.trace.adapt.early_stopping.EarlyStopping", "fe.trace.adapt.EarlyStopping")
class EarlyStopping(Trace):
    """Stop training when a monitored quantity has stopped improving.

    At the end of every epoch of its mode(s) it compares the monitored value with the best so far. A value counts as
    an improvement when it beats the best by more than `min_delta` (below it for 'min', above it for 'max'). After
    `patience` epochs in a row without improvement it sets `system.stop_training` (so training ends after this epoch)
    and prints

    ```
    FastEstimator-EarlyStopping: 'loss' triggered an early stop. Its best value was 0.12 at epoch 3
    ```

    The comparison is `monitor_op(current - min_delta, best)`, as in FastEstimator: `monitor_op` is `np.less` with
    `min_delta` stored negated for 'min', `np.greater` for 'max'; a user may replace either attribute.

    `wait` (epochs since the last improvement) and `best` are plain attributes, so they are saved with a checkpoint and
    a resumed run goes on counting where it stopped. They are reset at the start of each new `fit` (a run whose global
    step is not yet set), not when a restored run begins.

    Args:
        monitor: The key to monitor (for example an eval loss or metric).
        min_delta: The smallest change that counts as an improvement (its sign is ignored).
        patience: How many epochs without improvement to allow before stopping (0: stop at the first epoch that does
            not improve).
        compare: 'min' (lower is better) or 'max' (higher is better).
        baseline: A value to beat: training stops after `patience` epochs if the monitored value never beats it.
        mode: Mode(s) to run in; the monitored value must be written by the end of those epochs.

    Raises:
        ValueError: If `compare` is not 'min' or 'max', or `monitor` is not a single key.

    Example:
        >>> stopper = EarlyStopping(monitor="ce", patience=2)  # stop after 2 eval epochs without a lower 'ce'
        >>> stopper.wait, stopper.best
        (0, inf)
    """

    def __init__(self,
                 monitor: str = "loss",
                 min_delta: float = 0.0,
                 patience: int = 0,
                 compare: str = "min",
                 baseline: Optional[float] = None,
                 mode: Union[None, str, Iterable[str]] = "eval") -> None:
        if not isinstance(monitor, str):
            raise ValueError(f"EarlyStopping supports only one monitor key (a string), got {monitor!r}")
        if compare not in ("min", "max"):
            raise ValueError(f"EarlyStopping compare must be 'min' or 'max', got {compare!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"EarlyStopping patience must be a non-negative integer, got {patience!r}")
        super().__init__(inputs=monitor, mode=mode)
        self.monitored_key = monitor
        # FastEstimator's form: improvement is monitor_op(current - min_delta, best), min_delta negated for 'min'
        self.min_delta = -abs(float(min_delta)) if compare == "min" else abs(float(min_delta))
        self.monitor_op = np.less if compare == "min" else np.greater
        self.patience = patience
        self.compare = compare
        self.baseline = baseline
        self.wait = 0
        self.best: Any = self._initial_best()

    def _initial_best(self) -> Any:
        if self.baseline is not None:
            return self.baseline
        return math.inf if self.compare == "min" else -math.inf

    def _improves(self, current: Any) -> bool:
        return bool(self.monitor_op(current - self.min_delta, self.best))

    def on_begin(self, data: Data) -> None:
        if not self.system.global_step:  # a new run (a restored one keeps its counters)
            self.wait = 0
            self.best = self._initial_best()

    def on_epoch_end(self, data: Data) -> None:
        key = self.monitored_key
        if key not in data:
            system = self.system
            raise KeyError(f"EarlyStopping monitors {key!r}, but nothing wrote it by the end of epoch "
                           f"{system.epoch_idx} in mode {system.mode!r}; available keys: {sorted(data)}")
        current = data[key]
        if current is None:
            return
        if self._improves(current):
            self.best = current
            self.wait = 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            system = self.system
            system.stop_training = True
            print(f"FastEstimator-EarlyStopping: '{key}' triggered an early stop. Its best value was {self.best} at "
                  f"epoch {system.epoch_idx - self.wait}")
