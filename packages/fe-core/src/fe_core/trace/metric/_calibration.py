"""Calibration error with equal-mass binning (Kumar, Liang & Ma 2019, "Verified Uncertainty Calibration"), in numpy.

Scores are put into bins that each hold about the same number of samples (15 bins, or one bin per distinct value
when the scores take few distinct values, as a discrete calibrator's output does). The error of a bin is the gap
between its mean score and its frequency of positives; the calibration error is the root of the bin-size-weighted
mean squared gap (p = 2). 'marginal' averages the squared error of each class's one-vs-rest problem before the root;
'top-label' measures only the top prediction's confidence against whether it was right.
"""
from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np

__all__ = ["equal_mass_bins", "discrete_bins", "bin_index", "calibration_error", "calibration_error_interval",
           "top_label", "batch_pair", "paired_samples"]

DEFAULT_BINS = 15


def batch_pair(y_true: Any, y_pred: Any) -> Tuple[np.ndarray, np.ndarray]:
    """Labels and predictions of one batch as arrays with a batch axis: a 0-d label is one sample, whose prediction
    gets a batch axis too.

    Example:
        >>> [a.shape for a in batch_pair(1, [0.2, 0.8])], [a.shape for a in batch_pair([0, 1], [[1, 0], [0, 1]])]
        ([(1,), (1, 2)], [(2,), (2, 2)])
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred, dtype=np.float64)
    if y_true.ndim == 0:
        y_true, y_pred = y_true[None], y_pred[None]
    return y_true, y_pred


def paired_samples(trues: Sequence[Any], preds: Sequence[Any]) -> Tuple[np.ndarray, np.ndarray]:
    """Join collected labels and predictions into (N,) / (N, ...) arrays.

    The lists may hold batches (arrays with a batch axis) or single samples (FastEstimator's lists: a 0-d label and
    its prediction per entry), or a mix, entry by entry.

    Example:
        >>> true, pred = paired_samples([0, 1, np.array([1, 0])], [[0.9, 0.1], [0.2, 0.8], [[0.3, 0.7], [0.6, 0.4]]])
        >>> true.tolist(), pred.shape
        ([0, 1, 1, 0], (4, 2))
    """
    if len(trues) != len(preds):
        raise ValueError(f"{len(trues)} collected label entries but {len(preds)} prediction entries")
    if not trues:
        return np.zeros((0, ), dtype=np.int64), np.zeros((0, ))
    pairs = [batch_pair(true, pred) for true, pred in zip(trues, preds)]
    return np.concatenate([true for true, _ in pairs]), np.concatenate([pred for _, pred in pairs])


def equal_mass_bins(scores: np.ndarray, num_bins: int = DEFAULT_BINS) -> np.ndarray:
    """Upper bin edges splitting `scores` into `num_bins` bins of (about) equal count; the last edge is 1.0.

    Example:
        >>> equal_mass_bins(np.array([0.1, 0.2, 0.3, 0.4]), num_bins=2).tolist()
        [0.3, 1.0]
    """
    ordered = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    num_bins = min(num_bins, ordered.size)
    edges = [ordered[int(ordered.size * i / num_bins)] for i in range(1, num_bins)] + [1.0]
    return np.unique(np.asarray(edges, dtype=np.float64))


def discrete_bins(scores: np.ndarray) -> np.ndarray:
    """Upper bin edges for scores that take few distinct values: midpoints between consecutive values, then 1.0."""
    values = np.unique(np.asarray(scores, dtype=np.float64).ravel())
    return np.append((values[:-1] + values[1:]) / 2.0, 1.0)


def bin_index(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each score: the first edge that is >= the score."""
    return np.minimum(np.searchsorted(edges, scores, side="left"), edges.size - 1)


def _is_discrete(scores: np.ndarray) -> bool:
    columns = scores.reshape(scores.shape[0], -1)
    return all(discrete_bins(columns[:, c]).size < columns.shape[0] / 4.0 for c in range(columns.shape[1]))


def _binned_error_sq(scores: np.ndarray, hits: np.ndarray, discrete: bool, num_bins: int) -> float:
    """Bin-size-weighted mean of the squared gap between mean score and mean hit rate (plug-in estimate)."""
    if scores.size == 0:
        return 0.0
    edges = discrete_bins(scores) if discrete else equal_mass_bins(scores, num_bins)
    index = bin_index(scores, edges)
    counts = np.bincount(index, minlength=edges.size).astype(np.float64)
    gaps = np.bincount(index, weights=scores - hits, minlength=edges.size)
    filled = counts > 0
    return float(np.sum((gaps[filled] / counts[filled]) ** 2 * counts[filled]) / scores.size)


def top_label(probs: np.ndarray, labels: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(confidence of the top prediction, 1.0 where it is the label) of class probabilities (N, C)."""
    predicted = np.argmax(probs, axis=1)
    return probs[np.arange(probs.shape[0]), predicted], (predicted == labels).astype(np.float64)


def calibration_error(probs: np.ndarray, labels: np.ndarray, mode: str = "marginal",
                      num_bins: int = DEFAULT_BINS) -> float:
    """The L2 calibration error of probabilities against integer labels.

    Args:
        probs: Probabilities of the positive class (N,) with 0/1 labels, or class probabilities (N, C).
        labels: Integer labels (N,).
        mode: 'marginal' (average over classes) or 'top-label'.
        num_bins: Bins for equal-mass binning of continuous scores.

    Returns:
        The calibration error (0 is perfect).

    Raises:
        ValueError: On an unknown mode or labels outside the classes.
    """
    if mode not in ("marginal", "top-label"):
        raise ValueError(f"mode must be 'marginal' or 'top-label', got {mode!r}")
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels).astype(np.int64).ravel()
    if probs.shape[0] != labels.shape[0]:
        raise ValueError(f"{probs.shape[0]} predictions but {labels.shape[0]} labels")
    if probs.size == 0:
        return 0.0
    discrete = _is_discrete(probs)
    if probs.ndim == 1:
        if labels.min() < 0 or labels.max() > 1:
            raise ValueError("with one probability per sample, each label must be 0 or 1")
        return float(np.sqrt(_binned_error_sq(probs, labels.astype(np.float64), discrete, num_bins)))
    if labels.min() < 0 or labels.max() >= probs.shape[1]:
        raise ValueError(f"labels must be between 0 and {probs.shape[1] - 1}")
    if mode == "top-label":
        confidence, correct = top_label(probs, labels)
        return float(np.sqrt(_binned_error_sq(confidence, correct, discrete, num_bins)))
    errors = [_binned_error_sq(probs[:, c], (labels == c).astype(np.float64), discrete, num_bins)
              for c in range(probs.shape[1])]
    return float(np.sqrt(np.mean(errors)))


def calibration_error_interval(probs: np.ndarray, labels: np.ndarray, mode: str, confidence: float,
                               num_resamples: int = 100) -> Tuple[float, float, float]:
    """A bootstrap interval around the calibration error.

    The resamples are drawn from numpy's global random generator (seeded per epoch by the Pipeline, so runs repeat
    under `fe.enable_deterministic`).

    Args:
        probs: As in `calibration_error`.
        labels: As in `calibration_error`.
        mode: 'marginal' or 'top-label'.
        confidence: The interval's coverage in percent, in (0, 100).
        num_resamples: Bootstrap resamples.

    Returns:
        (low, estimate, high).
    """
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels).ravel()
    estimate = calibration_error(probs, labels, mode)
    n = probs.shape[0]
    if n == 0:
        return 0.0, 0.0, 0.0
    samples = [calibration_error(probs[idx], labels[idx], mode)
               for idx in (np.random.randint(0, n, size=n) for _ in range(num_resamples))]
    tail = (100.0 - confidence) / 2.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return float(min(low, estimate)), estimate, float(max(high, estimate))
