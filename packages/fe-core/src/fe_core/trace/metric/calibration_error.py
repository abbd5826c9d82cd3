"""`CalibrationError`: how far predicted probabilities are from observed frequencies."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.summary.summary import ValWithError
from fe_core.trace.metric._calibration import batch_pair, calibration_error, calibration_error_interval
from fe_core.trace.metric._stat_metric import StatMetric, joined

__all__ = ["CalibrationError", "to_label_indices"]


def to_label_indices(y_true: np.ndarray) -> np.ndarray:
    """Integer class labels (N,) from labels (N,), (N, 1) or one-hot (N, C)."""
    y_true = np.asarray(y_true)
    if y_true.ndim == 2 and y_true.shape[1] > 1:
        return np.argmax(y_true, axis=1)
    return np.rint(y_true.reshape(y_true.shape[0])).astype(np.int64)


def _collected_labels(y_true: np.ndarray) -> np.ndarray:
    """A batch's labels as FastEstimator collects them: one-hot rows (N, C>1) become class indices, others stay."""
    if y_true.ndim > 1 and y_true.shape[-1] > 1:
        return np.argmax(y_true, axis=-1)
    return y_true


@fe_export("fe.trace.metric.calibration_error.CalibrationError", "fe.trace.metric.CalibrationError")
class CalibrationError(StatMetric):
    """A trace which computes the calibration error for a given set of predictions.

    Unlike many common calibration error estimation algorithms, this one has actual theoretical bounds on the quality
    of its output: https://arxiv.org/pdf/1909.10155v1.pdf. Predictions are binned into equal-mass bins (15, or one
    per distinct value for discrete predictions) and the L2 gap between confidence and accuracy is measured per bin.

    Labels are class indices (N,) / (N, 1) or one-hot (N, C); predictions are class probabilities (N, C) or the
    positive-class probability (N,) / (N, 1) of a binary problem. Equal-mass binning needs every prediction of the
    epoch, so the sufficient statistics are the concatenated `y_true` and `y_pred` (all-gathered across processes).

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: What to call the output from this trace (for example in the logger output).
        method: Either 'marginal' or 'top-label'. 'marginal' calibration averages the calibration error over each class,
            whereas 'top-label' computes the error based on only the most confident predictions.
        confidence_interval: The calibration error confidence interval to be reported (estimated empirically by
            bootstrapping, 100 resamples). Should be in the range (0, 100), or else None to omit this extra
            calculation. With it, the logged value is a `ValWithError(low, estimate, high)`.

    The reported values are rounded to 4 decimal places, as FastEstimator reports them (0.3536, not 0.35355339).
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Raises:
        ValueError: If `method` is not 'marginal' or 'top-label', or `confidence_interval` is outside (0, 100).
    """

    reductions = {"y_true": "concat", "y_pred": "concat"}

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "calibration_error",
                 method: str = "marginal",
                 confidence_interval: Optional[int] = None,
                 per_ds: bool = True) -> None:
        if method not in ("marginal", "top-label"):
            raise ValueError(f"CalibrationError method must be 'marginal' or 'top-label', got {method!r}")
        if confidence_interval is not None and not 0 < confidence_interval < 100:
            raise ValueError(f"CalibrationError confidence_interval must be in (0, 100), got {confidence_interval}")
        super().__init__(inputs=[true_key, pred_key], outputs=output_name, mode=mode, ds_id=ds_id, per_ds=per_ds)
        self.method = method
        self.confidence_interval = confidence_interval

    @property
    def true_key(self) -> str:
        """The key of the ground truth."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the predicted probabilities."""
        return self.inputs[1]

    @property
    def y_true(self) -> List[Any]:
        """FastEstimator's list of this epoch's labels, one entry per sample (every dataset's in turn). Assigning a
        list (0-d labels, or one-hot rows) replaces what was collected."""
        return list(self._joined("y_true"))

    @y_true.setter
    def y_true(self, values: Iterable[Any]) -> None:
        values = list(values)
        self._replace("y_true", [_collected_labels(np.asarray(values))] if values else [])

    @property
    def y_pred(self) -> List[Any]:
        """FastEstimator's list of this epoch's predictions, one entry per sample. Assigning a list replaces what was
        collected."""
        return list(self._joined("y_pred"))

    @y_pred.setter
    def y_pred(self, values: Iterable[Any]) -> None:
        values = list(values)
        self._replace("y_pred", [np.asarray(values, dtype=np.float64)] if values else [])

    def _joined(self, name: str) -> np.ndarray:
        merged = self.merged(list(self.stats))
        return joined(merged[name]) if name in merged else np.zeros((0, ))

    def _replace(self, name: str, parts: List[np.ndarray]) -> None:
        """Make `parts` the only collected values of statistic `name` (as the unnamed dataset's)."""
        merged = self.merged(list(self.stats))
        self.stats = {"": {**{key: [joined(value)] for key, value in merged.items() if key != name}, name: parts}}

    def on_epoch_begin(self, data: Data) -> None:
        super().on_epoch_begin(data)

    def batch_stats(self, data: Data) -> Dict[str, np.ndarray]:
        # As FastEstimator collects them: one entry per sample, one-hot labels as class indices, everything else
        # (label (N, 1) rows, prediction rows) as given; the shapes are settled over the whole epoch in compute.
        y_true, y_pred = batch_pair(data[self.true_key], data[self.pred_key])  # a 0-d label is one sample
        y_true = _collected_labels(y_true)
        if y_pred.shape[0] != y_true.shape[0]:
            raise ValueError(f"{y_true.shape[0]} labels but {y_pred.shape[0]} predictions")
        return {"y_true": y_true, "y_pred": y_pred}

    def compute(self, stats: Dict[str, Any]) -> Union[float, ValWithError]:
        if not stats:
            return 0.0 if self.confidence_interval is None else ValWithError(0.0, 0.0, 0.0)
        y_true, y_pred = to_label_indices(joined(stats["y_true"])), joined(stats["y_pred"])
        if y_pred.ndim == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred[:, 0]
        if self.confidence_interval is None:
            return round(float(calibration_error(y_pred, y_true, mode=self.method)), 4)
        low, mid, high = calibration_error_interval(y_pred, y_true, self.method, self.confidence_interval)
        return ValWithError(round(float(low), 4), round(float(mid), 4), round(float(high), 4))
