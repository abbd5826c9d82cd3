"""Metric traces: Accuracy, Precision, Recall, F1Score, ConfusionMatrix and MCC; AUCScore, BleuScore,
CalibrationError, Dice and MeanAveragePrecision.

Each accumulates a confusion matrix per dataset over an epoch (O(C^2) memory, no stored predictions) and logs its
value at the end of each named dataset (`<output_name>|<ds_id>`) and of the epoch (`<output_name>`). `ConfusionMetric`
is their base, for writing more metrics of the same kind. The others keep other sufficient statistics per dataset
(`StatMetric`).
"""
from fe_core.trace.metric.accuracy import Accuracy
from fe_core.trace.metric.auc import AUCScore
from fe_core.trace.metric.bleu_score import BleuScore
from fe_core.trace.metric.calibration_error import CalibrationError
from fe_core.trace.metric.confusion_matrix import ConfusionMatrix
from fe_core.trace.metric.dice import Dice
from fe_core.trace.metric.f1_score import F1Score
from fe_core.trace.metric.mcc import MCC
from fe_core.trace.metric.mean_average_precision import MeanAveragePrecision
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.trace.metric.precision import Precision
from fe_core.trace.metric.recall import Recall

from fe_core.trace.metric._stat_metric import StatMetric

__all__ = ["Accuracy", "Precision", "Recall", "F1Score", "ConfusionMatrix", "MCC", "ConfusionMetric", "AUCScore",
           "BleuScore", "CalibrationError", "Dice", "MeanAveragePrecision", "StatMetric"]
