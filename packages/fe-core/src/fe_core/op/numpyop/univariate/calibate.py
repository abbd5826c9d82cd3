"""`Calibrate`: apply a calibration function to model predictions (a postprocessing op).

The module keeps FastEstimator's spelling (`calibate`) so that `fe.op.numpyop.univariate.calibate.Calibrate` imports.
"""
from __future__ import annotations

import importlib
import os
import pickle
from typing import Any, Callable, Dict, Iterable, List, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["Calibrate"]


def _to_numpy(value: Any) -> np.ndarray:
    """A numpy array of a numpy value, a torch tensor (any device) or a TensorFlow tensor, without importing either."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch.Tensor
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy"):  # tf.Tensor / keras tensors
        return value.numpy()
    return np.asarray(value)


def _load_function(path: str) -> Callable[[np.ndarray], np.ndarray]:
    """Load a pickled calibration function (with dill when it is installed, as FastEstimator saves them)."""
    try:
        loader = importlib.import_module("dill")
    except ImportError:
        loader = pickle
    with open(path, "rb") as file:
        function = loader.load(file)  # the user named this file as their calibration function
    if not callable(function):
        raise ValueError(f"Calibrate: {path} does not hold a function, it holds a {type(function).__name__}")
    return function


@fe_export("fe.op.numpyop.univariate.calibate.Calibrate", "fe.op.numpyop.univariate.Calibrate")
class Calibrate(UnivariateOp):
    """Calibrate model predictions with a calibration function; meant for `fe.Network`'s postprocessing ops.

    Often used with the PBMCalibrator trace, which saves such a function. Predictions that are torch or TensorFlow
    tensors are converted to numpy before the function sees them.

    Args:
        inputs: Key(s) of predictions to be calibrated.
        outputs: Key(s) into which to write the calibrated predictions.
        calibration_fn: The path to a (dill-)pickled calibration function, or an in-memory calibration function. A
            path is loaded lazily, on the first call outside warmup, so the file need not exist when training begins.
        mode: What mode(s) to execute this Op in; by default only 'test' and 'infer'.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        ValueError: If `calibration_fn` is neither a path nor callable.

    Example:
        >>> op = Calibrate("pred", "pred", calibration_fn=lambda x: x / x.sum(axis=-1, keepdims=True))
        >>> op.forward_batch([np.array([[1.0, 3.0]])], {"mode": "test"})[0].tolist()
        [[0.25, 0.75]]
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 calibration_fn: Union[str, Callable[[np.ndarray], np.ndarray]],
                 mode: Union[None, str, Iterable[str]] = ("test", "infer"),
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if isinstance(calibration_fn, (str, os.PathLike)):
            calibration_fn = os.path.abspath(os.path.normpath(os.fspath(calibration_fn)))
        elif not callable(calibration_fn):
            raise ValueError(f"Calibrate calibration_fn must be a file path or a function, got {calibration_fn!r}")
        self.calibration_fn = calibration_fn

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[np.ndarray]:
        batched = self.forward_batch([_to_numpy(value)[None] for value in data], state)
        return [np.squeeze(result, axis=0) if np.ndim(result) else result for result in batched]

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[np.ndarray]:
        if isinstance(self.calibration_fn, str):
            if state.get("warmup"):
                return list(data)  # the function may not be saved yet during warmup
            path = self.calibration_fn
            self.calibration_fn = _load_function(path)
            print(f"FastEstimator-Calibrate: calibration function loaded from {path}")
        function = self.calibration_fn
        return [function(_to_numpy(value)) for value in data]
