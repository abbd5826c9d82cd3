"""The counting every classification metric shares: turning labels and predictions into class indices, accumulating
them into a confusion matrix, and the scores computed from one.

Everything here is pure numpy. A confusion matrix `cm` has one row per true class and one column per predicted class,
so `cm[t, p]` counts the samples of class `t` predicted as `p`. Metrics keep only this matrix (O(C^2) memory) rather
than every prediction of an epoch.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

import numpy as np

__all__ = ["to_class_indices", "confusion_counts", "merge_confusions", "accuracy_from_confusion",
           "prf_from_confusion", "mcc_from_confusion", "AVERAGES", "PRF_KINDS"]

#: The averages Precision, Recall and F1Score accept (sklearn's names; None gives one value per class).
AVERAGES = (None, "binary", "micro", "macro", "weighted")
#: The per-class scores `prf_from_confusion` computes.
PRF_KINDS = ("precision", "recall", "f1")


def _labels_from_truth(y_true: np.ndarray) -> np.ndarray:
    """Class indices from ground truth: one-hot (N, C) -> argmax; sparse (N,) or (N, 1) -> as is (floats rounded)."""
    if y_true.ndim > 1 and y_true.shape[-1] > 1:
        y_true = np.argmax(y_true, axis=-1)
    elif y_true.ndim > 1:  # (..., 1): sparse labels with a trailing unit axis
        y_true = y_true[..., 0]
    if y_true.dtype.kind == "f":
        y_true = np.rint(y_true)
    elif y_true.dtype.kind not in "biu":
        raise TypeError(f"labels must be numeric, got dtype {y_true.dtype}")
    return y_true.astype(np.int64, copy=False).ravel()


def _labels_from_prediction(y_pred: np.ndarray, threshold: float, logits: bool = False) -> Tuple[np.ndarray, bool]:
    """Class indices from predictions, and whether the predictions were binary (one score per sample).

    Multi-class scores (..., C) with C > 1 -> argmax. A single score per sample ((N,) or (N, 1)) is a binary
    probability (or logit, with `threshold` 0) when floating point, thresholded (`> threshold`); integer or boolean
    predictions are taken as class indices already, unless `logits` says they are logits (integer logits -1 and 1
    are classes 0 and 1, as FastEstimator's sigmoid makes them).
    """
    if y_pred.ndim > 1 and y_pred.shape[-1] > 1:
        return np.argmax(y_pred, axis=-1).astype(np.int64, copy=False).ravel(), False
    if y_pred.ndim > 1:
        y_pred = y_pred[..., 0]
    if y_pred.dtype.kind == "f" or (logits and y_pred.dtype.kind in "biu"):
        return (y_pred > threshold).astype(np.int64).ravel(), True
    if y_pred.dtype.kind not in "biu":
        raise TypeError(f"predictions must be numeric, got dtype {y_pred.dtype}")
    return y_pred.astype(np.int64, copy=False).ravel(), True


def to_class_indices(y_true: np.ndarray, y_pred: np.ndarray, threshold: float = 0.5, allow_negative: bool = False,
                     logits: bool = False) -> Tuple[np.ndarray, np.ndarray, int, bool]:
    """Flatten one batch of labels and predictions into matching class-index vectors.

    Args:
        y_true: Ground truth: sparse class indices (N,) or (N, 1), or one-hot / soft labels (N, C). Extra leading axes
            (for example per-pixel labels) are flattened.
        y_pred: Predictions: class scores (N, C) (argmax is taken), a single probability per sample (N,) or (N, 1)
            (thresholded), or integer class indices.
        threshold: The threshold for single-score predictions (0.5 for probabilities, 0 for logits).
        allow_negative: Accept negative indices (a label -1 marking a sample no prediction can match).
        logits: Whether single-score predictions are logits (`from_logits`): integer ones are then thresholded too,
            not read as class indices.

    Returns:
        (true indices, predicted indices, how many classes the prediction's shape implies (C, or 2 for a single
        score), whether the prediction was a single binary score).

    Raises:
        ValueError: If the two do not hold the same number of samples, or a class index is negative.
        TypeError: If either is not numeric.

    Example:
        >>> t, p, n, binary = to_class_indices(np.array([0, 2, 1]), np.array([[.9, .1, 0], [0, .2, .8], [.6, .4, 0]]))
        >>> t.tolist(), p.tolist(), n, binary
        ([0, 2, 1], [0, 2, 0], 3, False)
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    true_idx = _labels_from_truth(y_true)
    pred_idx, binary = _labels_from_prediction(y_pred, threshold, logits)
    if true_idx.size != pred_idx.size:
        raise ValueError(f"labels of shape {y_true.shape} give {true_idx.size} class indices but predictions of shape "
                         f"{y_pred.shape} give {pred_idx.size}; they must describe the same samples")
    if true_idx.size and not allow_negative and (true_idx.min() < 0 or pred_idx.min() < 0):
        raise ValueError(f"class indices must be non-negative, got a minimum label of {true_idx.min()} and a minimum "
                         f"prediction of {pred_idx.min()}")
    implied = 2 if binary else int(y_pred.shape[-1])
    return true_idx, pred_idx, implied, binary


def confusion_counts(true_idx: np.ndarray, pred_idx: np.ndarray, num_classes: int) -> np.ndarray:
    """Count (true, predicted) pairs into a `num_classes` x `num_classes` int64 matrix, in one vectorised pass.

    Args:
        true_idx: True class indices, each in [0, num_classes).
        pred_idx: Predicted class indices, each in [0, num_classes).
        num_classes: The size of the matrix.

    Returns:
        The confusion matrix: rows are true classes, columns predicted classes.

    Example:
        >>> confusion_counts(np.array([0, 1, 1]), np.array([0, 0, 1]), 2).tolist()
        [[1, 0], [1, 1]]
    """
    flat = np.bincount(true_idx * num_classes + pred_idx, minlength=num_classes * num_classes)
    return flat.reshape(num_classes, num_classes).astype(np.int64, copy=False)


def merge_confusions(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """Sum confusion matrices of possibly different sizes (smaller ones are padded with zeros).

    Example:
        >>> merge_confusions([np.ones((2, 2), dtype=np.int64), np.ones((3, 3), dtype=np.int64)]).tolist()
        [[2, 2, 1], [2, 2, 1], [1, 1, 1]]
    """
    size = max((m.shape[0] for m in matrices), default=0)
    total = np.zeros((size, size), dtype=np.int64)
    for matrix in matrices:
        k = matrix.shape[0]
        total[:k, :k] += matrix
    return total


def _divide(numerator: np.ndarray, denominator: np.ndarray, zero_division: float) -> np.ndarray:
    """Element-wise numerator / denominator, with `zero_division` where the denominator is 0 (and no warnings)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, float(zero_division), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def accuracy_from_confusion(cm: np.ndarray) -> float:
    """The fraction of samples on the diagonal (0.0 for an empty matrix).

    Example:
        >>> accuracy_from_confusion(np.array([[3, 1], [0, 4]]))
        0.875
    """
    total = cm.sum()
    return float(np.trace(cm) / total) if total else 0.0


def prf_from_confusion(cm: np.ndarray,
                       kind: str,
                       average: Optional[str],
                       labels: Optional[Sequence[int]] = None,
                       pos_label: int = 1,
                       zero_division: float = 0.0) -> Union[float, np.ndarray]:
    """Precision, recall or F1 from a confusion matrix, with sklearn's averaging rules.

    Args:
        cm: The confusion matrix (rows true, columns predicted).
        kind: 'precision', 'recall' or 'f1'.
        average: None (one value per label), 'binary' (the value of `pos_label`), 'micro' (from the summed counts),
            'macro' (mean over labels) or 'weighted' (mean weighted by each label's true count).
        labels: The class indices to report / average over. None: every class that occurs in the labels or the
            predictions (as sklearn does), in increasing order.
        pos_label: The positive class for average='binary'.
        zero_division: The value of a score whose denominator is 0 (sklearn's `zero_division`).

    Returns:
        A float, or for `average` None an array with one value per label.

    Raises:
        ValueError: On an unknown `kind` or `average`, or a label outside the matrix.

    Example:
        >>> cm = np.array([[2, 1], [1, 4]])  # class 1: tp 4, fp 1, fn 1
        >>> prf_from_confusion(cm, "precision", "binary")
        0.8
        >>> prf_from_confusion(cm, "recall", None).tolist()
        [0.6666666666666666, 0.8]
    """
    if kind not in PRF_KINDS:
        raise ValueError(f"kind must be one of {PRF_KINDS}, got {kind!r}")
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    size = cm.shape[0]
    if average == "binary":
        labels = [pos_label]
    elif labels is None:
        labels = [c for c in range(size) if cm[c, :].any() or cm[:, c].any()]
    labels = [int(label) for label in labels]
    if any(label < 0 for label in labels):
        raise ValueError(f"labels must be non-negative class indices, got {labels}")
    if labels and max(labels) >= size:  # a class no sample used: all its counts are zero
        cm = merge_confusions([cm, np.zeros((max(labels) + 1,) * 2, dtype=np.int64)])
    idx = np.asarray(labels, dtype=np.int64)
    diag = np.diagonal(cm)
    tp = diag[idx].astype(np.float64)
    fp = cm.sum(axis=0)[idx] - tp
    fn = cm.sum(axis=1)[idx] - tp
    if average == "micro":
        tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    if kind == "precision":
        score = _divide(tp, tp + fp, zero_division)
    elif kind == "recall":
        score = _divide(tp, tp + fn, zero_division)
    else:
        score = _divide(2 * tp, 2 * tp + fp + fn, zero_division)
    if average is None:
        return score
    if average in ("binary", "micro"):
        return float(score.reshape(-1)[0]) if score.size else float(zero_division)
    if average == "macro":
        return float(score.mean()) if score.size else float(zero_division)
    support = tp + fn  # 'weighted'
    total = support.sum()
    return float((score * support).sum() / total) if total else float(zero_division)


def mcc_from_confusion(cm: np.ndarray) -> float:
    """The Matthews correlation coefficient (multi-class form, as sklearn's `matthews_corrcoef`); 0.0 when undefined.

    Example:
        >>> round(mcc_from_confusion(np.array([[3, 1], [1, 3]])), 6)
        0.5
    """
    cm = cm.astype(np.float64)
    true_counts = cm.sum(axis=1)
    pred_counts = cm.sum(axis=0)
    correct = np.trace(cm)
    total = cm.sum()
    cov_true_pred = correct * total - true_counts @ pred_counts
    cov_pred_pred = total * total - pred_counts @ pred_counts
    cov_true_true = total * total - true_counts @ true_counts
    denominator = cov_pred_pred * cov_true_true
    if denominator == 0:
        return 0.0
    return float(cov_true_pred / np.sqrt(denominator))
