"""`ClassScoreMetric`: the shared base of Precision, Recall and F1Score (per-class scores with sklearn's averaging)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from fe_core.trace.metric._confusion import prf_from_confusion
from fe_core.trace.metric.metric import ConfusionMetric

__all__ = ["ClassScoreMetric", "check_metric_kwargs"]


def check_metric_kwargs(owner: str, kwargs: Dict[str, Any], blacklist: Iterable[str]) -> None:
    """Reject the keyword arguments a metric sets itself, as FastEstimator's `check_kwargs` does.

    Args:
        owner: The metric's name, for the message.
        kwargs: The extra keyword arguments given (passed on to the scikit-learn style function).
        blacklist: The names the metric passes itself.

    Raises:
        ValueError: If `kwargs` holds one of `blacklist`.
    """
    illegal = [key for key in blacklist if key in kwargs]
    if illegal:
        raise ValueError(f"Arguments {illegal} cannot exist in kwargs of {owner}, since it passes them to the "
                         f"scikit-learn style function itself")


class ClassScoreMetric(ConfusionMetric):
    """Precision, recall or F1 over an epoch (see `ConfusionMetric` for the accepted shapes and per-dataset keys).

    At each dataset's and the epoch's end, `<function>(y_true, y_pred, average=..., **kwargs)` is called through the
    metric's module (`fe.trace.metric.f1_score.f1_score`, ...; scikit-learn's signature): average 'binary' for binary
    predictions (one score per sample; the positive class's value is logged), None otherwise (one value per class).
    `labels`, `pos_label` and `zero_division` are computed in numpy (a zero denominator gives `zero_division`, 0.0 by
    default, silently); other scikit-learn arguments (`sample_weight`) make the metric keep every sample of the epoch
    and call scikit-learn.

    Args:
        true_key: The key of the ground truth.
        pred_key: The key of the predictions.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        output_name: The key to log the metric under.
        per_ds: Also log `<output_name>|<ds_id>` for each named dataset.
        **kwargs: Additional keyword arguments passed to the scikit-learn style function.

    Raises:
        ValueError: One of ["y_true", "y_pred", "average"] argument exists in `kwargs`.
    """

    kind = "precision"
    function_name = "precision_score"
    BLACKLIST = ("y_true", "y_pred", "average")
    NATIVE_KWARGS = ("labels", "pos_label", "zero_division")

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "precision",
                 per_ds: bool = True,
                 **kwargs: Any) -> None:
        self.check_kwargs(kwargs)
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds)
        self.kwargs: Dict[str, Any] = dict(kwargs)
        self.keep_samples = bool(set(kwargs) - set(self.NATIVE_KWARGS))

    @classmethod
    def check_kwargs(cls, kwargs: Dict[str, Any]) -> None:
        """Check if `kwargs` has any blacklist argument and raise an error if it does.

        Args:
            kwargs: Keyword arguments to be examined.

        Raises:
            ValueError: One of ["y_true", "y_pred", "average"] argument exists in `kwargs`.
        """
        check_metric_kwargs(cls.__name__, kwargs, cls.BLACKLIST)

    def compute(self, confusion: np.ndarray, binary: bool) -> Union[float, np.ndarray]:
        from fe_core.trace.metric._sklearn_style import call_metric_function  # pylint: disable=C0415
        average = "binary" if binary else None
        if not confusion.size:
            return prf_from_confusion(confusion, self.kind, average, zero_division=0.0)
        y_true, y_pred = self.labels_for(confusion)
        module = type(self).__module__
        return call_metric_function(module.replace("fe_core.", "fe.", 1), module, self.function_name, y_true=y_true,
                                    y_pred=y_pred, average=average, **self.kwargs)
