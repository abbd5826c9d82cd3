"""`Accuracy`: the fraction of correctly classified samples."""
from __future__ import annotations

from typing import Iterable, Union

import numpy as np

from fe_core.data import Data
from fe_core.trace.metric._confusion import accuracy_from_confusion
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.export import fe_export

__all__ = ["Accuracy"]


@fe_export("fe.trace.metric.accuracy.Accuracy", "fe.trace.metric.Accuracy")
class Accuracy(ConfusionMetric):
    """A trace which computes the accuracy for a given set of predictions.

    Consider using MCC instead: https://www.ncbi.nlm.nih.gov/pmc/articles/PMC6941312/

    Labels may be class indices or one-hot; predictions class scores (argmax), one binary probability per sample
    (thresholded at 0.5, or a logit thresholded at 0 with `from_logits`), or class indices (see `ConfusionMetric`).
    With no sample seen the accuracy is 0.0.

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        from_logits: Whether single-score (binary) predictions are logits rather than probabilities.
        output_name: What to call the output from this trace (for example in the logger output).
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Example:
        >>> # 3 of 4 eval samples right: the eval log line shows 'accuracy: 0.75'
        >>> # Estimator(..., traces=[Accuracy(true_key="y", pred_key="y_pred")])
    """

    negative_labels = True  # a label -1 matches no prediction: a miss, as in FastEstimator

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 from_logits: bool = False,
                 output_name: str = "accuracy",
                 per_ds: bool = True) -> None:
        super().__init__(true_key, pred_key, mode=mode, ds_id=ds_id, output_name=output_name, per_ds=per_ds,
                         from_logits=from_logits)

    def write_per_instance(self, data: Data, true_idx: np.ndarray, pred_idx: np.ndarray) -> None:
        """Whether each sample was right (1) or wrong (0), as FastEstimator's per-instance accuracy; with several
        labels per sample (per-pixel labels), the share of each sample's labels that were right."""
        correct = (true_idx == pred_idx).astype(np.int8)
        shape = getattr(data[self.true_key], "shape", None)
        samples = int(shape[0]) if shape else 1
        if samples and correct.size != samples and correct.size % samples == 0:
            data.write_per_instance_log(self.output_name, correct.reshape(samples, -1).mean(axis=1))
        else:
            data.write_per_instance_log(self.output_name, correct)

    def compute(self, confusion: np.ndarray, binary: bool) -> float:
        return accuracy_from_confusion(confusion)
