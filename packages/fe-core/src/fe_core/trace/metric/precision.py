"""`Precision`: of the samples predicted as a class, the fraction that truly belong to it."""
from __future__ import annotations

from typing import Any, Iterable, Union

from fe_core.trace.metric._class_score import ClassScoreMetric
from fe_core.trace.metric._sklearn_style import precision_score
from fe_core.export import fe_export

__all__ = ["Precision", "precision_score"]

fe_export("fe.trace.metric.precision.precision_score")(precision_score)


@fe_export("fe.trace.metric.precision.Precision", "fe.trace.metric.Precision")
class Precision(ClassScoreMetric):
    """Computes precision (tp / (tp + fp)) for a classification task and reports it back to the logger.

    Binary predictions (one score per sample) log the precision of the positive class (a float); multi-class
    predictions log one precision per class (an array). A class that is never predicted has
    precision `zero_division` (0.0), without a warning. Counts are accumulated per batch (see `ConfusionMetric`).

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: Name of the key to store to the state.
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.
        **kwargs: Additional keyword arguments that pass to sklearn.metrics.precision_score() (through `precision_score` in this
            module: `labels`, `pos_label` and `zero_division` are computed in numpy, others need scikit-learn).

    Raises:
        ValueError: One of ["y_true", "y_pred", "average"] argument exists in `kwargs`.

    Example:
        >>> # Precision("y", "y_pred") logs one value per class, or the positive class's for binary predictions
    """

    kind = "precision"
    function_name = "precision_score"

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "precision",
                 per_ds: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds, **kwargs)
