"""`PlattBinnerMarginalCalibrator`: Platt scaling followed by equal-mass binning, per class (Kumar et al. 2019).

For each class c: fit a one-dimensional logistic regression of "label == c" on the logit of the predicted
probability of c (Platt scaling), then split the Platt-scaled probabilities into equal-mass bins and map every
probability to the mean Platt-scaled probability of its bin. The output takes finitely many values per class, which
is what makes its calibration error measurable with guarantees (https://arxiv.org/abs/1909.10155).

A fitted calibrator is a plain object of numpy arrays: it is callable (so `Calibrate` can apply it after loading it
from the file `PBMCalibrator` writes), and `to_state` / `from_state` turn it into checkpointable arrays.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from fe_core.trace.metric._calibration import bin_index, equal_mass_bins

__all__ = ["PlattBinnerMarginalCalibrator", "fit_platt"]

_EPS = 1e-12


def _logit(probs: np.ndarray) -> np.ndarray:
    probs = np.clip(np.asarray(probs, dtype=np.float64), _EPS, 1 - _EPS)
    return np.log(probs / (1 - probs))


def fit_platt(probs: np.ndarray, labels: np.ndarray, iterations: int = 100, ridge: float = 1e-8) -> np.ndarray:
    """Fit `sigmoid(a * logit(p) + b)` to 0/1 labels by Newton's method; returns (a, b).

    Example:
        >>> a, b = fit_platt(np.array([0.2, 0.4, 0.6, 0.8] * 5), np.array([0, 0, 1, 1] * 4 + [1, 0, 0, 1]))
        >>> bool(a > 0)
        True
    """
    x = np.stack([_logit(probs), np.ones(np.size(probs))], axis=1)
    y = np.asarray(labels, dtype=np.float64).ravel()
    params = np.zeros(2)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ params)))
        gradient = x.T @ (p - y) + ridge * params
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        params -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return params


class PlattBinnerMarginalCalibrator:
    """A per-class Platt-then-bin calibrator of class probabilities (N, C).

    Args:
        num_bins: Equal-mass bins per class.

    Example:
        >>> probs = np.random.default_rng(0).dirichlet([1, 1], size=200)
        >>> labels = (np.random.default_rng(1).random(200) < probs[:, 1]).astype(int)
        >>> calibrator = PlattBinnerMarginalCalibrator(num_bins=10).fit(probs, labels)
        >>> calibrator(probs).shape, len(np.unique(calibrator(probs)[:, 0])) <= 10
        ((200, 2), True)
    """

    def __init__(self, num_bins: int = 10) -> None:
        self.num_bins = num_bins
        self.platt: Optional[np.ndarray] = None  # (C, 2)
        self.edges: list = []  # per class: upper bin edges
        self.values: list = []  # per class: calibrated value of each bin

    def fit(self, probs: np.ndarray, labels: np.ndarray) -> "PlattBinnerMarginalCalibrator":
        """Fit on class probabilities (N, C) and integer labels (N,); returns self."""
        probs = np.asarray(probs, dtype=np.float64)
        if probs.ndim == 1:
            probs = np.stack([1 - probs, probs], axis=1)
        labels = np.asarray(labels).astype(np.int64).ravel()
        if probs.shape[0] != labels.shape[0] or probs.shape[0] == 0:
            raise ValueError(f"need as many labels as predictions (got {labels.shape[0]} and {probs.shape[0]})")
        platt, edges, values = [], [], []
        for c in range(probs.shape[1]):
            params = fit_platt(probs[:, c], labels == c)
            scaled = self._scale(probs[:, c], params)
            bins = equal_mass_bins(scaled, self.num_bins)
            index = bin_index(scaled, bins)
            counts = np.bincount(index, minlength=bins.size)
            sums = np.bincount(index, weights=scaled, minlength=bins.size)
            means = np.where(counts > 0, sums / np.maximum(counts, 1), bins)
            platt.append(params)
            edges.append(bins)
            values.append(means)
        self.platt, self.edges, self.values = np.array(platt), edges, values
        return self

    @staticmethod
    def _scale(probs: np.ndarray, params: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(params[0] * _logit(probs) + params[1])))

    def calibrate(self, probs: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of the same shape as `probs` ((N, C), or (N,) for the positive class)."""
        if self.platt is None:
            raise RuntimeError("PlattBinnerMarginalCalibrator must be fit before it can calibrate")
        probs = np.asarray(probs, dtype=np.float64)
        single = probs.ndim == 1
        columns = np.stack([1 - probs, probs], axis=1) if single else probs
        out = np.empty_like(columns)
        for c in range(columns.shape[1]):
            scaled = self._scale(columns[:, c], self.platt[c])
            out[:, c] = self.values[c][bin_index(scaled, self.edges[c])]
        return out[:, 1] if single else out

    __call__ = calibrate

    def to_state(self) -> Dict[str, object]:
        """The fitted parameters as numpy arrays (for checkpoints)."""
        return {"num_bins": self.num_bins, "platt": self.platt, "edges": list(self.edges),
                "values": list(self.values)}

    @classmethod
    def from_state(cls, state: Dict[str, object]) -> "PlattBinnerMarginalCalibrator":
        """A calibrator rebuilt from `to_state()`."""
        calibrator = cls(int(state["num_bins"]))  # type: ignore[arg-type]
        calibrator.platt = state["platt"]  # type: ignore[assignment]
        calibrator.edges = list(state["edges"])  # type: ignore[arg-type]
        calibrator.values = list(state["values"])  # type: ignore[arg-type]
        return calibrator
