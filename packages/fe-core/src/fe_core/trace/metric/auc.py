"""`AUCScore`: area under the ROC curve over an epoch's predictions."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np

from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.metric._roc import roc_auc
from fe_core.trace.metric._stat_metric import StatMetric, joined

__all__ = ["AUCScore"]

_AVERAGES = (None, "micro", "macro", "samples", "weighted")


@fe_export("fe.trace.metric.auc.AUCScore", "fe.trace.metric.AUCScore")
class AUCScore(StatMetric):
    """Compute Area Under the ROC Curve from prediction scores.

    The AUC is exact (scikit-learn's `roc_auc_score` definition, computed with numpy): every label and score of the
    epoch is kept, which are its sufficient statistics (`y_true` and `y_score`, reduced by concatenation, so they can
    be all-gathered across processes).

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary. Array-like of shape
            (n_samples,) or (n_samples, n_classes). The binary and multiclass cases expect labels with shape
            (n_samples,) while the multilabel case expects binary label indicators with shape (n_samples, n_classes).
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary. Array-like of shape
            (n_samples,) or (n_samples, n_classes) Target scores/Probability estimates.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an
            argument like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in
            all ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: Name of the key to store back to the state.
        average: {'micro', 'macro', 'samples', 'weighted'} or None. If None, the scores for each class are returned
            (multiclass: only with multi_class='ovo', one score per class pair). 'micro' counts every element of the
            label indicator matrix as a label; 'macro' is the unweighted mean over labels; 'weighted' weighs each
            label by its support; 'samples' averages per-instance scores. Ignored when y_true is binary.
        sample_weight: Sample weights, one per sample of the whole epoch, in order.
        max_fpr: If not None (0 < max_fpr <= 1), the standardized partial AUC over [0, max_fpr] is returned. Must be
            None or 1.0 for multiclass data.
        multi_class: {'raise', 'ovr', 'ovo'}. Only used for multiclass targets; 'raise' (the default) makes
            multiclass data an error, so pass 'ovr' (one-vs-rest) or 'ovo' (one-vs-one, Hand & Till) explicitly.
        labels: The classes of a multiclass problem, in the order of the score columns; if None, the sorted labels
            found in y_true.
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Raises:
        ValueError: If `max_fpr` is not None or in (0, 1], `multi_class` is not 'raise', 'ovr' or 'ovo', or `average`
            is not None, 'micro', 'macro', 'samples' or 'weighted'.
    """

    reductions = {"y_true": "concat", "y_score": "concat"}

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "auc",
                 average: str = "macro",
                 sample_weight: Optional[List[float]] = None,
                 max_fpr: Optional[float] = None,
                 multi_class: str = "raise",
                 labels: Optional[List[Any]] = None,
                 per_ds: bool = True) -> None:
        if max_fpr is not None and not 0 < max_fpr <= 1:
            raise ValueError(f"Expected max_fpr in range (0, 1], got: {max_fpr}")
        if multi_class not in ("raise", "ovr", "ovo"):
            raise ValueError(f"Expected 'multi_class' to be one of ['raise', 'ovr', 'ovo'], got: {multi_class!r}")
        if average not in _AVERAGES:
            raise ValueError(f"Expected 'average' to be None or one of ['micro', 'macro', 'samples', 'weighted'], "
                             f"got: {average!r}")
        super().__init__(inputs=[true_key, pred_key], outputs=output_name, mode=mode, ds_id=ds_id, per_ds=per_ds)
        self.average = average
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        self.max_fpr = max_fpr
        self.multi_class = multi_class
        self.labels = None if labels is None else list(labels)

    @property
    def true_key(self) -> str:
        """The key of the ground truth."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the prediction scores."""
        return self.inputs[1]

    def on_epoch_begin(self, data: Data) -> None:
        super().on_epoch_begin(data)

    def batch_stats(self, data: Data) -> Dict[str, np.ndarray]:
        y_true = np.asarray(data[self.true_key])
        y_score = np.asarray(data[self.pred_key], dtype=np.float64)
        if y_true.ndim == 2 and y_true.shape[1] == 1:
            y_true = y_true[:, 0]
        if y_score.ndim == 2 and y_score.shape[1] == 1:
            y_score = y_score[:, 0]
        if y_true.shape[0] != y_score.shape[0]:
            raise ValueError(f"{y_true.shape[0]} labels but {y_score.shape[0]} predictions")
        return {"y_true": y_true, "y_score": y_score}

    def get_auc(self, stats: Optional[Dict[str, Any]] = None) -> Any:
        """The AUC of the epoch so far (of every dataset, or of the given statistics).

        Returns:
            The AUC (an array when `average` is None).
        """
        stats = self.merged(list(self.stats)) if stats is None else stats
        return roc_auc(joined(stats["y_true"]), joined(stats["y_score"]), average=self.average,
                       sample_weight=self.sample_weight, max_fpr=self.max_fpr, multi_class=self.multi_class,
                       labels=self.labels)

    def compute(self, stats: Dict[str, Any]) -> Any:
        if not stats:
            return 0.0
        try:
            return self.get_auc(stats)
        except ValueError as err:
            raise ValueError(f"{self._where(getattr(self.system, 'ds_id', ''))}: {err}") from err
