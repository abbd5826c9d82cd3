"""`Onehot`: integer class labels to (optionally smoothed) one-hot vectors."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["Onehot"]


@fe_export("fe.op.numpyop.univariate.onehot.Onehot", "fe.op.numpyop.univariate.Onehot")
class Onehot(UnivariateOp):
    """Turn an integer label into a float32 one-hot vector of length `num_classes`.

    With label smoothing the true class gets `1 - label_smoothing + label_smoothing / num_classes` and every other
    class `label_smoothing / num_classes`. Batch-capable: a batch of labels (shape `(n,)` or `(n, 1)`) becomes an
    `(n, num_classes)` array equal to the stacked per-sample vectors.

    Args:
        inputs: Key(s) of labels (integers, or integer arrays of one element).
        outputs: Key(s) to write.
        num_classes: Number of classes.
        label_smoothing: Smoothing factor in [0, 1).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If a label is not a single integer in [0, num_classes).

    Example:
        >>> Onehot("y", "y", num_classes=3).forward([2], {})[0].tolist()
        [0.0, 0.0, 1.0]
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 num_classes: int,
                 label_smoothing: float = 0.0,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
            raise ValueError(f"Onehot num_classes must be a positive integer, got {num_classes!r}")
        if not 0 <= label_smoothing < 1:
            raise ValueError(f"Onehot label_smoothing must be in [0, 1), got {label_smoothing!r}")
        self.num_classes = int(num_classes)
        self.label_smoothing = label_smoothing
        self._off = label_smoothing / self.num_classes
        self._on = 1.0 - label_smoothing + self._off

    def _labels(self, labels: np.ndarray, count: int) -> np.ndarray:
        if labels.dtype.kind not in "iu":
            raise ValueError(f"Onehot {self.inputs} expects integer labels, got dtype {labels.dtype}")
        if labels.size != count:
            raise ValueError(f"Onehot {self.inputs} expects one label per sample, got shape {labels.shape}")
        labels = labels.reshape(count)
        if count and (labels.min() < 0 or labels.max() >= self.num_classes):
            raise ValueError(f"Onehot {self.inputs} labels must be in [0, {self.num_classes}), got values in "
                             f"[{labels.min()}, {labels.max()}]")
        return labels

    def transform_sample(self, value: Any) -> np.ndarray:
        label = self._labels(np.asarray(value), 1)[0]
        out = np.full(self.num_classes, self._off, dtype=np.float32)
        out[label] = self._on
        return out

    def transform_batch(self, values: Any) -> np.ndarray:
        values = np.asarray(values)
        count = len(values)
        labels = self._labels(values, count)
        out = np.full((count, self.num_classes), self._off, dtype=np.float32)
        out[np.arange(count), labels] = self._on
        return out
