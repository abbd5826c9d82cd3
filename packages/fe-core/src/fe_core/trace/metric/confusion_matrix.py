"""`ConfusionMatrix`: the counts of every (true class, predicted class) pair over an epoch."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.trace.metric._class_score import check_metric_kwargs
from fe_core.trace.metric._sklearn_style import call_metric_function, confusion_matrix
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.export import fe_export

__all__ = ["ConfusionMatrix", "confusion_matrix"]

fe_export("fe.trace.metric.confusion_matrix.confusion_matrix")(confusion_matrix)

_NORMALIZE = (None, "true", "pred", "all")


@fe_export("fe.trace.metric.confusion_matrix.ConfusionMatrix", "fe.trace.metric.ConfusionMatrix")
class ConfusionMatrix(ConfusionMetric):
    """Computes the confusion matrix between y_true and y_pred.

    The logged value is a `num_classes` x `num_classes` int64 array whose entry [i, j] counts the samples of true
    class i predicted as class j (sklearn's convention), or a float array with `normalize`. A class index at or above
    `num_classes` in the labels or predictions raises a ValueError naming it.

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        num_classes: Total number of classes of the confusion matrix.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: Name of the key to store to the state.
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.
        **kwargs: Additional keyword arguments that pass to sklearn.metrics.confusion_matrix(), through
            `confusion_matrix` in this module (`normalize` - None, 'true', 'pred' or 'all' - is computed in numpy;
            others, such as `sample_weight`, make the trace keep every sample and call scikit-learn).

    Raises:
        ValueError: If `num_classes` is not a positive integer, or one of ["y_pred", "y_true", "labels"] argument
            exists in `kwargs`.

    Example:
        >>> # ConfusionMatrix("y", "y_pred", num_classes=10) logs a 10x10 array as 'confusion_matrix'
    """

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 num_classes: int,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "confusion_matrix",
                 per_ds: bool = True,
                 **kwargs: Any) -> None:
        self.check_kwargs(kwargs)
        normalize = kwargs.get("normalize")
        if normalize not in _NORMALIZE:
            raise ValueError(f"ConfusionMatrix normalize must be one of {list(_NORMALIZE)}, got {normalize!r}")
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds,
                         num_classes=num_classes)
        self.normalize: Optional[str] = normalize
        self.kwargs = dict(kwargs)
        self.keep_samples = bool(set(kwargs) - {"normalize"})

    @staticmethod
    def check_kwargs(kwargs: Dict[str, Any]) -> None:
        """Check if `kwargs` has any blacklist argument and raise an error if it does.

        Args:
            kwargs: Keyword arguments to be examined.

        Raises:
            ValueError: One of ["y_pred", "y_true", "labels"] argument exists in `kwargs`.
        """
        check_metric_kwargs("ConfusionMatrix", kwargs, ("y_pred", "y_true", "labels"))

    def compute(self, confusion: np.ndarray, binary: bool) -> np.ndarray:
        if confusion.sum():
            y_true, y_pred = self.labels_for(confusion)
            return call_metric_function("fe.trace.metric.confusion_matrix", __name__, "confusion_matrix",
                                        y_true=y_true, y_pred=y_pred, labels=list(range(confusion.shape[0])),
                                        **self.kwargs)
        if self.normalize is None:
            return confusion.copy()
        if self.normalize == "true":
            totals = confusion.sum(axis=1, keepdims=True)
        elif self.normalize == "pred":
            totals = confusion.sum(axis=0, keepdims=True)
        else:
            totals = np.asarray(confusion.sum())
        out = np.zeros(confusion.shape, dtype=np.float64)
        np.divide(confusion, totals, out=out, where=totals != 0)
        return out
