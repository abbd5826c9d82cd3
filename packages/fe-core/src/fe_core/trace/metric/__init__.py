"""Metric traces: Accuracy, Precision, Recall, F1Score, ConfusionMatrix and MCC.

Each accumulates a confusion matrix per dataset over an epoch (O(C^2) memory, no stored predictions) and logs its
value at the end of each named dataset (`<output_name>|<ds_id>`) and of the epoch (`<output_name>`). `ConfusionMetric`
is their base, for writing more metrics of the same kind.
"""
from fe_core.trace.metric.accuracy import Accuracy
from fe_core.trace.metric.confusion_matrix import ConfusionMatrix
from fe_core.trace.metric.f1_score import F1Score
from fe_core.trace.metric.mcc import MCC
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.trace.metric.precision import Precision
from fe_core.trace.metric.recall import Recall

__all__ = ["Accuracy", "Precision", "Recall", "F1Score", "ConfusionMatrix", "MCC", "ConfusionMetric"]
