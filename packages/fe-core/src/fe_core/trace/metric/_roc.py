"""Area under the ROC curve in numpy (binary, one-vs-rest, one-vs-one and multilabel), as scikit-learn defines it."""
from __future__ import annotations

from itertools import combinations
from typing import Optional, Sequence

import numpy as np

__all__ = ["binary_auc", "roc_auc"]


def binary_auc(y_true: np.ndarray, y_score: np.ndarray, sample_weight: Optional[np.ndarray] = None,
               max_fpr: Optional[float] = None) -> float:
    """ROC AUC of binary labels (1 = positive) and scores; tied scores count as one threshold.

    Args:
        y_true: 0/1 labels (N,).
        y_score: Scores (N,), higher means more positive.
        sample_weight: Optional weights (N,).
        max_fpr: If given (0 < max_fpr <= 1), the McClish-standardized partial AUC over FPR in [0, max_fpr].

    Returns:
        The AUC.

    Raises:
        ValueError: If only one class is present.

    Example:
        >>> binary_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
        0.75
    """
    y_true = np.asarray(y_true).ravel() == 1
    y_score = np.asarray(y_score, dtype=np.float64).ravel()
    weight = np.ones_like(y_score) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
    if y_true.all() or not y_true.any():
        raise ValueError("Only one class present in y_true. ROC AUC score is not defined in that case.")
    order = np.argsort(-y_score, kind="mergesort")
    score, pos, weight = y_score[order], y_true[order], weight[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(score)), score.size - 1]
    tps = np.cumsum(weight * pos)[last_of_tie]
    fps = np.cumsum(weight * ~pos)[last_of_tie]
    tpr = np.r_[0.0, tps / tps[-1]]
    fpr = np.r_[0.0, fps / fps[-1]]
    if max_fpr is None or max_fpr == 1:
        return float(np.trapezoid(tpr, fpr))
    stop = np.searchsorted(fpr, max_fpr, side="right")
    x_interp = [fpr[stop - 1], fpr[stop]]
    y_interp = [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_interp, y_interp))
    fpr = np.append(fpr[:stop], max_fpr)
    partial = float(np.trapezoid(tpr, fpr))
    min_area = 0.5 * max_fpr ** 2
    return 0.5 * (1 + (partial - min_area) / (max_fpr - min_area))


def _average(scores: np.ndarray, average: Optional[str], support: np.ndarray) -> np.ndarray | float:
    if average is None:
        return scores
    if average == "weighted":
        if support.sum() == 0:
            return 0.0
        return float(np.average(scores, weights=support))
    return float(np.mean(scores))


def _multilabel(y_true: np.ndarray, y_score: np.ndarray, average: Optional[str], sample_weight: Optional[np.ndarray],
                max_fpr: Optional[float]) -> np.ndarray | float:
    if average == "micro":
        weight = None if sample_weight is None else np.repeat(sample_weight, y_true.shape[1])
        return binary_auc(y_true.ravel(), y_score.ravel(), weight, max_fpr)
    if average == "samples":
        scores = np.array([binary_auc(y_true[i], y_score[i], None, max_fpr) for i in range(y_true.shape[0])])
        return float(np.average(scores, weights=sample_weight))
    scores = np.array([binary_auc(y_true[:, c], y_score[:, c], sample_weight, max_fpr)
                       for c in range(y_true.shape[1])])
    weights = y_true if sample_weight is None else y_true * sample_weight[:, None]
    return _average(scores, average, weights.sum(axis=0))


def roc_auc(y_true: np.ndarray, y_score: np.ndarray, average: Optional[str] = "macro",
            sample_weight: Optional[np.ndarray] = None, max_fpr: Optional[float] = None, multi_class: str = "raise",
            labels: Optional[Sequence] = None) -> np.ndarray | float:
    """ROC AUC with scikit-learn's `roc_auc_score` conventions.

    - binary: labels (N,) of two values (the larger is positive) and scores (N,), (N, 1) or (N, 2) (column 1);
    - multiclass: labels (N,) of more than two values and probabilities (N, C), with `multi_class` 'ovr' or 'ovo';
    - multilabel: 0/1 indicators (N, C) and scores (N, C).

    Args:
        y_true: The labels.
        y_score: The scores.
        average: None, 'micro', 'macro', 'samples' or 'weighted'.
        sample_weight: Optional weights per sample.
        max_fpr: Standardized partial AUC up to this FPR (binary and multilabel only).
        multi_class: 'raise', 'ovr' or 'ovo'.
        labels: The classes of a multiclass problem, in the order of the score columns.

    Returns:
        The AUC (an array per class or pair when `average` is None).

    Raises:
        ValueError: On inconsistent shapes, a missing `multi_class` for multiclass data, or one-class data.
    """
    y_true = np.asarray(y_true)
    y_score = np.asarray(y_score, dtype=np.float64)
    weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
    if weight is not None and weight.shape[0] != y_true.shape[0]:
        raise ValueError(f"sample_weight has {weight.shape[0]} entries but there are {y_true.shape[0]} samples")
    if y_true.ndim == 2 and y_true.shape[1] > 1:  # multilabel indicators
        if y_score.shape != y_true.shape:
            raise ValueError(f"multilabel y_true of shape {y_true.shape} needs y_score of the same shape, got "
                             f"{y_score.shape}")
        return _multilabel(y_true, y_score, average, weight, max_fpr)
    y_true = y_true.ravel()
    classes = np.unique(y_true) if labels is None else np.asarray(labels)
    multiclass = y_score.ndim == 2 and y_score.shape[1] > 2 or classes.size > 2
    if not multiclass:
        if y_score.ndim == 2:
            y_score = y_score[:, -1]
        if classes.size > 2:
            raise ValueError(f"binary y_score but y_true has classes {classes.tolist()}")
        positive = classes.max() if classes.size else 1
        return binary_auc(y_true == positive, y_score, weight, max_fpr)
    if multi_class == "raise":
        raise ValueError("multi_class must be in ('ovo', 'ovr') for multiclass targets")
    if max_fpr is not None and max_fpr != 1.0:
        raise ValueError(f"Partial AUC computation not available in multiclass setting, 'max_fpr' must be set to "
                         f"`None` or 1.0, received `max_fpr={max_fpr}` instead")
    if y_score.ndim != 2 or y_score.shape[1] != classes.size:
        raise ValueError(f"Number of classes in y_true ({classes.size}) not equal to the number of columns in "
                         f"'y_score' ({y_score.shape[-1] if y_score.ndim == 2 else 1})")
    if not np.allclose(y_score.sum(axis=1), 1.0):
        raise ValueError("Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum up to "
                         "1.0 over classes")
    if not np.isin(y_true, classes).all():
        raise ValueError(f"y_true holds labels missing from labels={classes.tolist()}")
    onehot = (y_true[:, None] == classes[None, :]).astype(np.int64)
    if multi_class == "ovr":
        if average not in (None, "macro", "weighted", "micro"):
            raise ValueError(f"average must be None, 'micro', 'macro' or 'weighted' for multiclass 'ovr', got "
                             f"{average!r}")
        return _multilabel(onehot, y_score, average, weight, None)
    if weight is not None:
        raise ValueError("sample_weight is not supported for multiclass one-vs-one ROC AUC")
    if average not in (None, "macro", "weighted"):
        raise ValueError(f"average must be None, 'macro' or 'weighted' for multiclass 'ovo', got {average!r}")
    pair_scores, prevalence = [], []
    for a, b in combinations(range(classes.size), 2):
        mask = (onehot[:, a] | onehot[:, b]).astype(bool)
        a_true = onehot[mask, a]
        auc_a = binary_auc(a_true, y_score[mask, a])
        auc_b = binary_auc(1 - a_true, y_score[mask, b])
        pair_scores.append((auc_a + auc_b) / 2)
        prevalence.append(mask.mean())
    return _average(np.array(pair_scores), average, np.array(prevalence))
