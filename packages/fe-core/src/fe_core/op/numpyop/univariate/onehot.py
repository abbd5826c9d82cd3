"""`Onehot`: integer class labels (single labels or label maps) to (optionally smoothed) one-hot encodings."""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

import numpy as np

from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.export import fe_export

__all__ = ["Onehot"]


@fe_export("fe.op.numpyop.univariate.onehot.Onehot", "fe.op.numpyop.univariate.Onehot")
class Onehot(UnivariateOp):
    """Transform integer labels (starting from 0) into float32 one-hot encodings of length `num_classes`.

    A single label (an int, or an integer array of one element) becomes a vector of shape `(num_classes,)`. A label
    map, such as a segmentation mask of shape `(H, W)` or `(H, W, 1)`, becomes `(H, W, num_classes)`: every pixel is
    encoded and a trailing axis of size 1 is replaced by the class axis. With label smoothing the true class gets
    `1 - label_smoothing + label_smoothing / num_classes` and every other class `label_smoothing / num_classes`.
    Batch-capable: a batch gives exactly the stacked per-sample encodings.

    Args:
        inputs: Input key(s) of labels to be onehot encoded.
        outputs: Output key(s) of labels.
        num_classes: Total number of classes.
        label_smoothing: Smoothing factor in [0, 1).
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        ValueError: If `num_classes` or `label_smoothing` is invalid, or (when run) a label is not an integer in
            [0, num_classes).

    Example:
        >>> Onehot("y", "y", num_classes=3).forward([2], {})[0].tolist()
        [0.0, 0.0, 1.0]
        >>> Onehot("mask", "mask", num_classes=3).forward([np.zeros((4, 4, 1), dtype=np.uint8)], {})[0].shape
        (4, 4, 3)
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
        table = np.full((self.num_classes, self.num_classes), self._off, dtype=np.float32)
        np.fill_diagonal(table, self._on)
        self._table = table

    def _encode(self, labels: np.ndarray) -> np.ndarray:
        """Rows of the one-hot table for integer `labels` of any shape (the class axis is appended)."""
        if labels.dtype.kind not in "iu":
            raise ValueError(f"Onehot {self.inputs} expects integer labels, got dtype {labels.dtype}")
        if labels.size and (labels.min() < 0 or labels.max() >= self.num_classes):
            raise ValueError(f"Onehot {self.inputs} labels must be in [0, {self.num_classes}), got values in "
                             f"[{labels.min()}, {labels.max()}]")
        return self._table[labels]

    @staticmethod
    def _label_shape(shape: Tuple[int, ...]) -> Tuple[int, ...]:
        """The shape of one sample's labels without a trailing axis of size 1 (a single label has shape ())."""
        if int(np.prod(shape)) == 1:
            return ()
        if shape and shape[-1] == 1:
            return shape[:-1]
        return shape

    def transform_sample(self, value: Any) -> np.ndarray:
        labels = np.asarray(value)
        return self._encode(labels.reshape(self._label_shape(labels.shape)))

    def transform_batch(self, values: Any) -> np.ndarray:
        values = np.asarray(values)
        if values.ndim == 0:
            raise ValueError(f"Onehot {self.inputs} expects a batch of labels, got a scalar")
        return self._encode(values.reshape((len(values),) + self._label_shape(values.shape[1:])))
