"""Cross entropies: `binary_crossentropy`, `categorical_crossentropy`, `sparse_categorical_crossentropy`.

Shared conventions (every backend):
- Probabilities (`from_logits=False`) are clipped to [1e-7, 1 - 1e-7] before their log is taken. Categorical
  probabilities are used as given on torch, and divided by their sum over the class axis on TensorFlow and numpy (as
  Keras does), so rows that do not sum to 1 give different values, as in FastEstimator.
- The class axis is the last one for TensorFlow and numpy, axis 1 for torch (`(Batch, C, ...)`).
- Predictions in float16/bfloat16 (mixed precision) are computed in float32; the loss is float32.
- `class_weights` maps class index -> weight (classes not listed weigh 1). On TensorFlow it may also be a
  `tf.lookup.StaticHashTable`, as in FastEstimator.
- The per-element loss (one value per sample for 2-D predictions) is averaged over everything when `average_loss`.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, TypeVar, Union

import numpy as np

from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "EPSILON",
           "weight_table"]

Tensor = TypeVar("Tensor")
Weight_Dict = Union[Dict[int, float], Any]

EPSILON = 1e-7  # probabilities are clipped to [EPSILON, 1 - EPSILON] before their log is taken

_dispatch = Dispatch("crossentropy")


def weight_table(class_weights: Dict[int, float], num_classes: int) -> np.ndarray:
    """A float32 lookup table of `max(num_classes, largest key + 1)` entries: the class's weight, or 1."""
    size = max(int(num_classes), max((int(key) for key in class_weights), default=-1) + 1)
    table = np.ones(size, dtype=np.float32)
    for key, value in class_weights.items():
        table[int(key)] = float(value)
    return table


def _np_float(y_pred: Any) -> np.ndarray:
    y_pred = np.asarray(y_pred)
    return y_pred.astype(np.float32) if y_pred.dtype != np.float64 else y_pred


def _np_finish(loss: np.ndarray, average_loss: bool) -> np.ndarray:
    return np.mean(loss) if average_loss else loss


def _np_log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def _np_log_probabilities(y_pred: np.ndarray, from_logits: bool) -> np.ndarray:
    if from_logits:
        return _np_log_softmax(y_pred)
    y_pred = y_pred / np.sum(y_pred, axis=-1, keepdims=True)
    return np.log(np.clip(y_pred, EPSILON, 1.0 - EPSILON))


@fe_export("fe.backend.binary_crossentropy", "fe.backend._binary_crossentropy.binary_crossentropy")
def binary_crossentropy(y_pred: Tensor, y_true: Tensor, from_logits: bool = False, average_loss: bool = True,
                        class_weights: Optional[Weight_Dict] = None) -> Tensor:
    """Compute binary crossentropy: element by element, then averaged over each sample's elements.

    This method is applicable when there are only two label classes (zero and one).

    Args:
        y_pred: Prediction with a shape like (batch, ...). dtype: float32 or float16.
        y_true: Ground truth class labels with the same shape as `y_pred`. dtype: int or float32 or float16.
        from_logits: Whether y_pred is from logits. If True, a sigmoid will be applied to the prediction.
        average_loss: Whether to average the element-wise loss.
        class_weights: Mapping of class indices (0 or 1) to a weight for weighting the loss function.

    Returns:
        The binary crossentropy between `y_pred` and `y_true`. A scalar if `average_loss` is True, else a tensor with
        the shape (Batch) (the mean of each sample's element-wise losses, as FastEstimator computes it).

    Raises:
        AssertionError: If `y_true` or `y_pred` are unacceptable data types.

    Example:
        >>> true, pred = np.array([[1], [0], [1], [0]]), np.array([[0.9], [0.3], [0.8], [0.1]])
        >>> round(float(binary_crossentropy(pred, true)), 3)
        0.198
        >>> np.round(binary_crossentropy(pred, true, average_loss=False, class_weights={1: 2.0}), 3).tolist()
        [0.211, 0.357, 0.446, 0.105]
    """
    backend = _owner(y_pred, y_true, "binary_crossentropy")
    if backend is not None:
        return backend.binary_crossentropy(y_pred, y_true, from_logits, average_loss, class_weights)
    pred = _np_float(y_pred)
    true = np.asarray(y_true).astype(pred.dtype).reshape(pred.shape)
    if from_logits:
        loss = np.maximum(pred, 0) - pred * true + np.log1p(np.exp(-np.abs(pred)))
    else:
        pred = np.clip(pred, EPSILON, 1.0 - EPSILON)
        loss = -(true * np.log(pred) + (1.0 - true) * np.log(1.0 - pred))
    if class_weights:
        loss = loss * weight_table(class_weights, 2)[np.rint(true).astype(np.int64)]
    if loss.ndim > 1:
        loss = loss.reshape(loss.shape[0], -1).mean(axis=1)
    return _np_finish(loss, average_loss)


@fe_export("fe.backend.categorical_crossentropy", "fe.backend._categorical_crossentropy.categorical_crossentropy")
def categorical_crossentropy(y_pred: Tensor, y_true: Tensor, from_logits: bool = False, average_loss: bool = True,
                             class_weights: Optional[Weight_Dict] = None) -> Tensor:
    """Compute categorical crossentropy.

    Note that if `from_logits` is False, each entry of `y_pred` should sum to 1. If they don't sum to 1 then tf and
    torch backends will result in different numerical values.

    Args:
        y_pred: Prediction with a shape like (Batch, ..., C) for tensorflow and numpy and (Batch, C, ...) for
            PyTorch. dtype: float32 or float16.
        y_true: Ground truth class labels (one-hot or soft) with a shape like `y_pred`. dtype: int or float.
        from_logits: Whether y_pred is from logits. If True, a softmax will be applied to the prediction.
        average_loss: Whether to average the element-wise loss.
        class_weights: Mapping of class indices to a weight; each sample is weighted by its label's class (the
            argmax of `y_true`).

    Returns:
        The categorical crossentropy between `y_pred` and `y_true`. A scalar if `average_loss` is True, else a
        tensor with the shape (Batch) (or `y_pred`'s shape without the class axis).

    Raises:
        AssertionError: If `y_true` or `y_pred` are unacceptable data types.

    Example:
        >>> true = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
        >>> pred = np.array([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]])
        >>> round(float(categorical_crossentropy(pred, true)), 3)
        0.228
        >>> np.round(categorical_crossentropy(pred, true, average_loss=False, class_weights={1: 2.0, 2: 3.0}), 3
        ...          ).tolist()
        [0.446, 0.105, 1.07]
    """
    backend = _owner(y_pred, y_true, "categorical_crossentropy")
    if backend is not None:
        return backend.categorical_crossentropy(y_pred, y_true, from_logits, average_loss, class_weights)
    pred = _np_float(y_pred)
    true = np.asarray(y_true).astype(pred.dtype)
    loss = -np.sum(true * _np_log_probabilities(pred, from_logits), axis=-1)
    if class_weights:
        loss = loss * weight_table(class_weights, pred.shape[-1])[np.argmax(true, axis=-1)]
    return _np_finish(loss, average_loss)


@fe_export("fe.backend.sparse_categorical_crossentropy",
           "fe.backend._sparse_categorical_crossentropy.sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(y_pred: Tensor, y_true: Tensor, from_logits: bool = False,
                                    average_loss: bool = True, class_weights: Optional[Weight_Dict] = None) -> Tensor:
    """Compute sparse categorical crossentropy.

    Note that if `from_logits` is False, each entry of `y_pred` should sum to 1. If they don't sum to 1 then tf and
    torch backends will result in different numerical values.

    Args:
        y_pred: Prediction with a shape like (Batch, ..., C) for tensorflow and numpy and (Batch, C, ...) for
            PyTorch. dtype: float32 or float16.
        y_true: Ground truth class labels with a shape like (Batch, ...) (or with a trailing/class axis of 1), each
            element the label index starting from 0. dtype: int.
        from_logits: Whether y_pred is from logits. If True, a softmax will be applied to the prediction.
        average_loss: Whether to average the element-wise loss.
        class_weights: Mapping of class indices to a weight for weighting each sample by its label.

    Returns:
        The sparse categorical crossentropy between `y_pred` and `y_true`. A scalar if `average_loss` is True, else a
        tensor with the shape (Batch) (or `y_true`'s shape without a class axis).

    Raises:
        AssertionError: If `y_true` or `y_pred` are unacceptable data types.

    Example:
        >>> true = np.array([[1], [0], [2]])
        >>> pred = np.array([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]])
        >>> np.round(sparse_categorical_crossentropy(pred, true, average_loss=False), 2).tolist()
        [0.22, 0.11, 0.36]
    """
    backend = _owner(y_pred, y_true, "sparse_categorical_crossentropy")
    if backend is not None:
        return backend.sparse_categorical_crossentropy(y_pred, y_true, from_logits, average_loss, class_weights)
    pred = _np_float(y_pred)
    labels = np.asarray(y_true).astype(np.int64)
    if labels.ndim == pred.ndim:
        labels = labels.reshape(labels.shape[:-1])
    log_p = _np_log_probabilities(pred, from_logits)
    loss = -np.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]
    if class_weights:
        loss = loss * weight_table(class_weights, pred.shape[-1])[labels]
    return _np_finish(loss, average_loss)


def _owner(y_pred: Any, y_true: Any, function: str) -> Any:
    """The backend of `y_pred` (None: numpy), checking both inputs are tensors (AssertionError otherwise)."""
    try:
        backend = _dispatch(y_pred, function)
        _dispatch(y_true, function)
    except ValueError as error:
        raise AssertionError(str(error)) from None
    return backend
