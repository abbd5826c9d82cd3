"""`ClassScoreMetric`: the shared base of Precision, Recall and F1Score (per-class scores with sklearn's averaging)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.trace.metric._confusion import AVERAGES, prf_from_confusion
from fe_core.trace.metric.metric import ConfusionMetric

__all__ = ["ClassScoreMetric", "check_metric_kwargs"]

_AUTO = "auto"  # 'binary' for binary predictions, None otherwise


def check_metric_kwargs(owner: str, kwargs: Dict[str, Any], supported: Iterable[str]) -> None:
    """Reject keyword arguments a metric does not support, naming the metric and what it does support.

    FastEstimator passes a metric's extra keyword arguments to scikit-learn; fe computes the metrics itself from a
    confusion matrix and supports the arguments that make sense for one.

    Args:
        owner: The metric's name, for the message.
        kwargs: The extra keyword arguments given.
        supported: The names it accepts.

    Raises:
        ValueError: If `kwargs` holds 'y_true' or 'y_pred' (the metric supplies those) or any unsupported name.
    """
    reserved = sorted(key for key in ("y_true", "y_pred") if key in kwargs)
    if reserved:
        raise ValueError(f"Arguments {reserved} cannot exist in kwargs of {owner}, since it supplies them itself")
    supported = tuple(supported)
    unknown = sorted(set(kwargs) - set(supported))
    if unknown:
        raise ValueError(f"{owner} does not support the keyword argument(s) {unknown} (it counts a confusion matrix "
                         f"instead of storing every prediction); supported: {list(supported) or 'none'}")


class ClassScoreMetric(ConfusionMetric):
    """Precision, recall or F1 over an epoch (see `ConfusionMetric` for the accepted shapes and per-dataset keys).

    With binary predictions (one score per sample) the value of the positive class is logged; otherwise one value per
    class (an array), unless `average` says how to combine them. Scores whose denominator is zero are
    `zero_division` (0.0 by default, silently).

    Args:
        true_key: The key of the ground truth.
        pred_key: The key of the predictions.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        output_name: The key to log the metric under.
        per_ds: Also log `<output_name>|<ds_id>` for each named dataset.
        **kwargs: scikit-learn style options: `average` (None, 'binary', 'micro', 'macro', 'weighted'; default
            'binary' for binary predictions and None otherwise), `labels` (the class indices to report or average
            over; default every class seen in the labels or predictions), `pos_label` (the positive class for
            'binary', default 1) and `zero_division` (default 0).

    Raises:
        ValueError: On unsupported or invalid keyword arguments.
    """

    kind = "precision"
    SUPPORTED_KWARGS = ("average", "labels", "pos_label", "zero_division")

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "precision",
                 per_ds: bool = True,
                 **kwargs: Any) -> None:
        name = type(self).__name__
        check_metric_kwargs(name, kwargs, self.SUPPORTED_KWARGS)
        average = kwargs.get("average", _AUTO)
        if average != _AUTO and average not in AVERAGES:
            raise ValueError(f"{name} average must be one of {list(AVERAGES)}, got {average!r}")
        zero_division = kwargs.get("zero_division", 0.0)
        if zero_division == "warn":
            zero_division = 0.0
        if isinstance(zero_division, bool) or not isinstance(zero_division, (int, float)):
            raise ValueError(f"{name} zero_division must be a number (0, 1 or nan), got {zero_division!r}")
        labels = kwargs.get("labels")
        if labels is not None:
            labels = [int(label) for label in np.asarray(labels).ravel()]
            if any(label < 0 for label in labels):
                raise ValueError(f"{name} labels must be non-negative class indices, got {labels}")
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds)
        self.average: Optional[str] = average
        self.labels: Optional[list] = labels
        self.pos_label = int(kwargs.get("pos_label", 1))
        self.zero_division = float(zero_division)

    def compute(self, confusion: np.ndarray, binary: bool) -> Union[float, np.ndarray]:
        average = self.average
        if average == _AUTO:
            average = "binary" if binary else None
        elif average == "binary" and confusion.shape[0] > 2:
            raise ValueError(f"{type(self).__name__} ({self.output_name!r}) was given average='binary' but found "
                             f"{confusion.shape[0]} classes; choose one of {[a for a in AVERAGES if a != 'binary']}")
        return prf_from_confusion(confusion, self.kind, average, labels=self.labels, pos_label=self.pos_label,
                                  zero_division=self.zero_division)
