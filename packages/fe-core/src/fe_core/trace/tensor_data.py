"""The framework tensors a user's Trace reads from `data`, as in FastEstimator, while fe's own traces read numpy.

FastEstimator hands a Trace's `on_batch_begin` / `on_batch_end` the batch and the Network's predictions as framework
tensors (torch or TensorFlow, on the host), and user traces call `data["y_pred"].numpy()`. fe computes its own
traces on numpy (the fast path: a prediction is copied off the device once, when a trace first reads it), so the
Estimator gives a user trace's batch hooks a `TensorData` view instead: the same logs and batch, whose batch values
become the Network's framework tensors on the host when read (zero-copy from numpy where the array allows it).
Writes go to the shared Data, so what a user trace logs reaches every other trace and the Summary.

Which traces get the view is decided once per trace and hook (`reads_tensors`): those whose hook is written outside
fe's packages (a user's Trace, a user's subclass overriding the hook, a `per_ds` class made from a user's trace).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np

from fe_core.data import Data

__all__ = ["TensorData", "TensorViews", "reads_tensors", "forwards_hook", "FE_PACKAGES"]

#: Top-level packages whose traces compute on numpy (fe's own).
FE_PACKAGES = frozenset({"fe_core", "fe_torch", "fe_tf", "fe"})

_NUMERIC_KINDS = "biufc"


def forwards_hook(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a hook that only forwards to another class's hook (as `per_ds`'s do): the class it forwards to decides
    whether the trace reads tensors."""
    function.fe_forwards_hook = True  # type: ignore[attr-defined]
    return function


def reads_tensors(trace: Any, hook: str) -> bool:
    """Whether `trace`'s `hook` ('on_batch_begin' / 'on_batch_end') is user code, which reads framework tensors.

    Example:
        >>> from fe_core.trace.metric import Accuracy
        >>> reads_tensors(Accuracy(true_key="y", pred_key="y_pred"), "on_batch_end")  # fe's own: numpy
        False
    """
    for klass in type(trace).__mro__:
        function = klass.__dict__.get(hook)
        if function is None or getattr(function, "fe_forwards_hook", False):
            continue
        module = getattr(function, "__module__", None) or klass.__module__ or ""
        return module.partition(".")[0] not in FE_PACKAGES
    return False


class TensorData(Data):
    """A view of a step's `Data` whose batch values read as framework tensors on the host.

    Logged values (what traces wrote with `write_with_log`) read as they were written, except a batch value logged
    as it is (a loss), which reads as the batch's tensor; batch values (inputs and predictions) that are numeric numpy
    arrays or numpy scalars are converted by `convert` when first read in this view. Every write goes to the viewed
    Data.

    Args:
        data: The step's Data.
        convert: Makes a host tensor of one numeric numpy array.
    """

    __slots__ = ("data", "_convert", "_tensors")

    # pylint: disable-next=super-init-not-called
    def __init__(self, data: Data, convert: Callable[[np.ndarray], Any]) -> None:
        self.data = data
        self._logs = data._logs
        self._batch = data._batch
        self._per_instance = data._per_instance
        self._convert = convert
        self._tensors: Dict[str, Tuple[Any, Any]] = {}

    def __getitem__(self, key: str) -> Any:
        logs = self._logs
        if key in logs:
            logged = logs[key]
            # a batch value logged as it is (a loss the Logger prints) reads as the batch's tensor, as in FastEstimator
            if not (key in self._batch and self._batch[key] is logged):
                return logged
        value = self._batch[key]
        known = self._tensors.get(key)
        if known is not None and known[0] is value:
            return known[1]
        tensor = self._to_tensor(value)
        self._tensors[key] = (value, tensor)
        return tensor

    def _to_tensor(self, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in _NUMERIC_KINDS:
                return value
            if not value.flags.writeable:
                value = value.copy()  # a read-only array cannot be shared with a tensor the user may edit
            return self._convert(value)
        if isinstance(value, np.generic) and value.dtype.kind in _NUMERIC_KINDS:
            return self._convert(np.asarray(value))
        return value

    def write_with_log(self, key: str, value: Any) -> None:
        self.data.write_with_log(key, value)

    def write_without_log(self, key: str, value: Any) -> None:
        self.data.write_without_log(key, value)

    def write_per_instance_log(self, key: str, value: Any) -> None:
        self.data.write_per_instance_log(key, value)

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value


class TensorViews:
    """One `TensorData` per step, shared by every user hook called with that step's Data (a value read by two user
    traces is converted once).

    Args:
        convert: Makes a host tensor of one numeric numpy array.
    """

    __slots__ = ("convert", "_data", "_view")

    def __init__(self, convert: Callable[[np.ndarray], Any]) -> None:
        self.convert = convert
        self._data: Any = None
        self._view: Any = None

    def view(self, data: Data) -> TensorData:
        """The tensor view of `data`."""
        if self._data is not data:
            self._data, self._view = data, TensorData(data, self.convert)
        return self._view

    def hook(self, hook: Callable[[Data], Any]) -> Callable[[Data], Any]:
        """`hook`, called with the tensor view of the Data it is given."""
        view = self.view

        def call(data: Data) -> Any:
            return hook(view(data))

        call.fe_user_hook = hook  # type: ignore[attr-defined]
        return call
