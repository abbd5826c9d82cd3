"""`ReduceLROnPlateau`: lower a model's learning rate when an eval metric stops improving."""
from __future__ import annotations

import math
from typing import Any, Iterable, List, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.framework.registry import model_backend
from fe_core.trace.adapt.model_metric import ModelMetricTrace, model_name_of
from fe_core.export import fe_export

__all__ = ["ReduceLROnPlateau"]


@fe_export("fe.trace.adapt.reduce_lr_on_plateau.ReduceLROnPlateau", "fe.trace.adapt.ReduceLROnPlateau")
class ReduceLROnPlateau(ModelMetricTrace):
    """Reduce a model's learning rate when an evaluation metric has stopped improving.

    At the end of every eval epoch the metric is compared with the best so far (strictly lower for 'min', strictly
    higher for 'max'). After `patience` epochs in a row without improvement the learning rate becomes
    `max(min_lr, factor * lr)` (set through the network's backend), the count starts again, the new rate is logged as
    `<model_name>_lr`, and

    ```
    FastEstimator-ReduceLROnPlateau: learning rate reduced to 0.001
    ```

    is printed. `wait` and `best` are plain attributes, saved with a checkpoint.

    Args:
        model: A model built with `build` (with an optimizer).
        metric: The key to watch; None for the model's loss (the loss_name of the UpdateOp that updates it).
        patience: How many epochs without improvement to allow before each reduction.
        factor: What the learning rate is multiplied by.
        best_mode: 'min' (lower is better) or 'max' (higher is better).
        min_lr: The learning rate is never reduced below this.
        mode: Mode(s) to run in ('eval' as in FastEstimator; the metric must be written by the end of those epochs).

    Raises:
        ValueError: If `best_mode` is not 'min' or 'max'; when the Estimator attaches its System, if `metric` is None
            and the model's loss cannot be inferred.

    Example:
        >>> # ReduceLROnPlateau(model, metric="ce", patience=3, factor=0.5)
    """

    def __init__(self,
                 model: Any,
                 metric: Optional[str] = None,
                 patience: int = 10,
                 factor: float = 0.1,
                 best_mode: str = "min",
                 min_lr: float = 1e-6,
                 mode: Union[None, str, Iterable[str]] = "eval") -> None:
        if best_mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau best_mode must be 'min' or 'max', got {best_mode!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"ReduceLROnPlateau patience must be a non-negative integer, got {patience!r}")
        self.lr_key = f"{model_name_of(model)}_lr"
        super().__init__(model=model, metric=metric, mode=mode)
        self.outputs = [self.lr_key]
        self.patience = patience
        self.factor = factor
        self.best_mode = best_mode
        self.min_lr = min_lr
        self.wait = 0
        self.best: Any = math.inf if best_mode == "min" else -math.inf

    def outputs_for(self, metric: str) -> List[str]:
        return [self.lr_key]

    def on_epoch_end(self, data: Data) -> None:
        current = self.read_metric(data)
        if (current < self.best) if self.best_mode == "min" else (current > self.best):
            self.best = current
            self.wait = 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            backend = model_backend(self.model)
            # the product in float32, as FastEstimator computes it (0.1 * 0.001 is not 0.00010000000000000002)
            new_lr = max(self.min_lr, np.float32(self.factor * float(backend.get_lr(self.model))))
            backend.set_lr(self.model, float(new_lr))
            self.wait = 0
            data.write_with_log(self.lr_key, new_lr)
            print(f"FastEstimator-ReduceLROnPlateau: learning rate reduced to {new_lr}")
