"""Metric traces (FastEstimator's `fastestimator.trace.metric`)."""
from fe_core.trace.metric.accuracy import Accuracy
from fe_core.trace.metric.confusion_matrix import ConfusionMatrix
from fe_core.trace.metric.f1_score import F1Score
from fe_core.trace.metric.mcc import MCC
from fe_core.trace.metric.metric import ConfusionMetric
from fe_core.trace.metric.precision import Precision
from fe_core.trace.metric.recall import Recall
from fe.trace.metric import accuracy, confusion_matrix, f1_score, mcc, metric, precision, recall

__all__ = ["Accuracy", "ConfusionMatrix", "ConfusionMetric", "F1Score", "MCC", "Precision", "Recall", "accuracy",
           "confusion_matrix", "f1_score", "mcc", "metric", "precision", "recall"]
