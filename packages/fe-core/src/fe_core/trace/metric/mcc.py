"""`MCC`: the Matthews correlation coefficient."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Union

import numpy as np

from fe_core.trace.metric._class_score import check_metric_kwargs
from fe_core.trace.metric._confusion import mcc_from_confusion
from fe_core.trace.metric._sklearn_style import call_metric_function, matthews_corrcoef
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.export import fe_export

__all__ = ["MCC", "matthews_corrcoef"]

fe_export("fe.trace.metric.mcc.matthews_corrcoef")(matthews_corrcoef)


@fe_export("fe.trace.metric.mcc.MCC", "fe.trace.metric.MCC")
class MCC(ConfusionMetric):
    """A trace which computes the Matthews Correlation Coefficient for a given set of predictions.

    This is a preferable metric to accuracy or F1 score since it automatically corrects for class imbalances and does
    not depend on the choice of target class (https://www.ncbi.nlm.nih.gov/pmc/articles/PMC6941312/). Ideal value is
    1, a value of 0 means your predictions are completely uncorrelated with the true data. A value less than zero
    implies anti-correlation (you should invert your classifier predictions in order to do better). The multi-class
    form is used for more than two classes (as sklearn's `matthews_corrcoef`); when it is undefined (every label or
    every prediction the same class) the value is 0.0.

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: What to call the output from this trace (for example in the logger output).
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.
        **kwargs: Additional keyword arguments that pass to sklearn.metrics.matthews_corrcoef(), through
            `matthews_corrcoef` in this module (numpy without them; with them every sample of the epoch is kept and
            scikit-learn is called).

    Raises:
        ValueError: One of ["y_true", "y_pred"] argument exists in `kwargs`.

    Example:
        >>> # MCC("y", "y_pred") logs 'mcc', and 'mcc|ds1', 'mcc|ds2' with two named eval datasets
    """

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "mcc",
                 per_ds: bool = True,
                 **kwargs: Any) -> None:
        self.check_kwargs(kwargs)
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds)
        self.kwargs = dict(kwargs)
        self.keep_samples = bool(kwargs)

    @staticmethod
    def check_kwargs(kwargs: Dict[str, Any]) -> None:
        """Check if `kwargs` has any blacklist argument and raise an error if it does.

        Args:
            kwargs: Keyword arguments to be examined.

        Raises:
            ValueError: One of ["y_true", "y_pred"] argument exists in `kwargs`.
        """
        check_metric_kwargs("MCC", kwargs, ("y_true", "y_pred"))

    def compute(self, confusion: np.ndarray, binary: bool) -> float:
        if not confusion.sum():
            return mcc_from_confusion(confusion)
        y_true, y_pred = self.labels_for(confusion)
        return call_metric_function("fe.trace.metric.mcc", __name__, "matthews_corrcoef", y_true=y_true,
                                    y_pred=y_pred, **self.kwargs)
