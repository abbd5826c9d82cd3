"""scikit-learn's metric functions as the metric traces call them: native numpy where the arguments allow, else
scikit-learn itself (an optional dependency, imported only then).

FastEstimator's F1Score, Precision, Recall, ConfusionMatrix and MCC call `sklearn.metrics.<name>(y_true, y_pred,
**kwargs)` through a name imported into their own module, so users pass any of scikit-learn's keyword arguments and
patch `<module>.<name>` in their tests. fe's traces do the same through `call_metric_function`, which looks the name up
in the trace's `fe` module (where a user's patch lands) and then in its fe_core module; the functions defined here
are the defaults, and compute the common cases in numpy without scikit-learn.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from fe_core.trace.metric._confusion import confusion_counts, mcc_from_confusion, prf_from_confusion

__all__ = ["sklearn_metric", "native_confusion", "f1_score", "precision_score", "recall_score", "confusion_matrix",
           "matthews_corrcoef", "call_metric_function"]


def sklearn_metric(name: str) -> Callable[..., Any]:
    """`sklearn.metrics.<name>`, imported now.

    Raises:
        ImportError: Naming the extra to install when scikit-learn is missing.
    """
    try:
        from sklearn import metrics  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError(f"{name} with these keyword arguments needs scikit-learn: pip install scikit-learn "
                          f"(or the 'examples' extra of fe)") from error
    return getattr(metrics, name)


def native_confusion(y_true: Any, y_pred: Any, labels: Optional[Sequence[int]] = None) -> np.ndarray:
    """The confusion matrix of integer labels and predictions (classes 0..max, or `labels` in that order)."""
    y_true = np.asarray(y_true).astype(np.int64).ravel()
    y_pred = np.asarray(y_pred).astype(np.int64).ravel()
    size = int(max(y_true.max(initial=-1), y_pred.max(initial=-1))) + 1
    if labels is not None:
        size = max(size, int(max(labels)) + 1)
    matrix = confusion_counts(y_true, y_pred, max(size, 1))
    if labels is not None:
        order = [int(label) for label in labels]
        matrix = matrix[np.ix_(order, order)]
    return matrix


def _prf(kind: str, name: str, y_true: Any, y_pred: Any, **kwargs: Any) -> Any:
    native = {"labels", "pos_label", "average", "zero_division"}
    if set(kwargs) - native:
        return sklearn_metric(name)(y_true, y_pred, **kwargs)
    matrix = native_confusion(y_true, y_pred)
    average = kwargs.get("average", "binary")
    if average == "binary" and matrix.shape[0] > 2:
        raise ValueError(f"{name}: average='binary' with {matrix.shape[0]} classes; choose another average")
    zero_division = kwargs.get("zero_division", 0.0)
    labels = kwargs.get("labels")
    return prf_from_confusion(matrix, kind, average, labels=None if labels is None else [int(x) for x in labels],
                              pos_label=int(kwargs.get("pos_label", 1)),
                              zero_division=0.0 if zero_division == "warn" else float(zero_division))


def f1_score(y_true: Any, y_pred: Any, **kwargs: Any) -> Any:
    """scikit-learn's `f1_score` (numpy for `labels`, `pos_label`, `average`, `zero_division`)."""
    return _prf("f1", "f1_score", y_true, y_pred, **kwargs)


def precision_score(y_true: Any, y_pred: Any, **kwargs: Any) -> Any:
    """scikit-learn's `precision_score` (numpy for `labels`, `pos_label`, `average`, `zero_division`)."""
    return _prf("precision", "precision_score", y_true, y_pred, **kwargs)


def recall_score(y_true: Any, y_pred: Any, **kwargs: Any) -> Any:
    """scikit-learn's `recall_score` (numpy for `labels`, `pos_label`, `average`, `zero_division`)."""
    return _prf("recall", "recall_score", y_true, y_pred, **kwargs)


def confusion_matrix(y_true: Any, y_pred: Any, **kwargs: Any) -> np.ndarray:
    """scikit-learn's `confusion_matrix` (numpy for `labels` and `normalize`)."""
    if set(kwargs) - {"labels", "normalize"}:
        return sklearn_metric("confusion_matrix")(y_true, y_pred, **kwargs)
    matrix = native_confusion(y_true, y_pred, kwargs.get("labels"))
    normalize = kwargs.get("normalize")
    if normalize is None:
        return matrix
    if normalize == "true":
        totals = matrix.sum(axis=1, keepdims=True)
    elif normalize == "pred":
        totals = matrix.sum(axis=0, keepdims=True)
    elif normalize == "all":
        totals = np.asarray(matrix.sum())
    else:
        raise ValueError(f"confusion_matrix normalize must be None, 'true', 'pred' or 'all', got {normalize!r}")
    out = np.zeros(matrix.shape, dtype=np.float64)
    np.divide(matrix, totals, out=out, where=totals != 0)
    return out


def matthews_corrcoef(y_true: Any, y_pred: Any, **kwargs: Any) -> float:
    """scikit-learn's `matthews_corrcoef` (numpy without keyword arguments)."""
    if kwargs:
        return sklearn_metric("matthews_corrcoef")(y_true, y_pred, **kwargs)
    return mcc_from_confusion(native_confusion(y_true, y_pred))


def call_metric_function(fe_module: str, core_module: str, name: str, **arguments: Any) -> Any:
    """Call the metric function `name` as the trace's module sees it now: a user's replacement in the `fe` module
    (`unittest.mock.patch("fe.trace.metric.mcc.matthews_corrcoef")`) or in the fe_core module wins over the default.

    Args:
        fe_module: The trace's module in the `fe` namespace ('fe.trace.metric.mcc').
        core_module: The module that defines the trace ('fe_core.trace.metric.mcc').
        name: The function's name ('matthews_corrcoef').
        **arguments: Its keyword arguments (y_true, y_pred and the trace's kwargs).
    """
    default = globals()[name]
    function = getattr(sys.modules.get(core_module), name, default)
    public: Dict[str, Any] = vars(sys.modules[fe_module]) if fe_module in sys.modules else {}
    if public.get(name, default) is not default:
        function = public[name]
    return function(**arguments)
