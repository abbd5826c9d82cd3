"""`export_model`: save a trained torch or TensorFlow model in a serving format, and prove the copy computes the same.

The framework halves live in the mirrored modules `fe_torch.util.export` and `fe_tf.util.export`, found from the
model's class (no framework is imported here). Every export is written next to its destination first, loaded back
with the runtime that serves it (onnxruntime, `torch.jit.load`, `torch.export.load`, the SavedModel loader, the
TFLite interpreter), run on `example_inputs` and compared with the model itself in inference mode; only an export
within tolerance is moved into place. A refused export leaves nothing behind at `save_path`.

Formats:

| framework | format | written | checked with | extra |
|---|---|---|---|---|
| torch | `"onnx"` (default) | one `.onnx` file | onnxruntime | `fe-torch[export]` |
| torch | `"torchscript"` | one `.pt` file (`torch.jit.trace`; `script` if tracing fails) | `torch.jit.load` | |
| torch | `"torch.export"` | one `.pt2` file (`torch.export.export` + `save`) | `torch.export.load` | |
| tf | `"saved_model"` (default) | a directory (`model.export`; tf-keras: `saved_model.save`) | `saved_model.load` | |
| tf | `"tflite"` | one `.tflite` file (`tf.lite.TFLiteConverter`) | `tf.lite.Interpreter` | |
| tf | `"onnx"` | one `.onnx` file (tf2onnx `from_function`) | onnxruntime | `fe-tf[export]` |
"""
from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from fe_core.export import fe_export
from fe_core.util._framework_util import util_module_for

__all__ = ["export_model", "ExportResult", "ExportVerificationError", "DEFAULT_ATOL", "staged_path", "max_difference"]

#: The largest absolute difference between the exported model's outputs and the model's own that `export_model`
#: accepts by default. float32 models exported to ONNX / TorchScript / SavedModel / TFLite typically differ by 1e-7
#: to 1e-5 (operator fusion, different kernels); a larger difference means the export computes something else.
DEFAULT_ATOL = 1e-4


@fe_export("fe.util.ExportResult")
@dataclass(frozen=True)
class ExportResult:
    """What `export_model` wrote and how closely it matches the model.

    Attributes:
        path: The exported file or directory (absolute).
        format: The format written ('onnx', 'torchscript', 'torch.export', 'saved_model', 'tflite').
        max_abs_diff: The largest absolute difference between the export's outputs and the model's on the example
            inputs (and on a batch of twice their size when the batch dimension is dynamic).
        atol: The tolerance it was checked against.
        dynamic_batch: Whether the export accepts any batch size.
    """
    path: str
    format: str
    max_abs_diff: float
    atol: float
    dynamic_batch: bool


@fe_export("fe.util.ExportVerificationError")
class ExportVerificationError(ValueError):
    """An exported model's outputs differ from the model's by more than the tolerance (nothing was written)."""


@fe_export("fe.util.export_model")
def export_model(model: Any,
                 save_path: str,
                 example_inputs: Any,
                 format: Optional[str] = None,  # pylint: disable=redefined-builtin  (the documented name)
                 atol: float = DEFAULT_ATOL,
                 dynamic_batch: bool = True) -> ExportResult:
    """Export a torch or TensorFlow model for serving, and check the export before returning.

    The model is run in inference mode (torch `eval()`, Keras `training=False`: dropout off, batch normalization on
    its running statistics) for both the export and the comparison; a torch model's train/eval mode is restored
    afterwards. The export is written to a temporary sibling of `save_path`, loaded back with its runtime, run on
    `example_inputs` (and, with a dynamic batch dimension, on the example batch repeated twice), compared with the
    model's own outputs, and moved to `save_path` only when every output is within `atol`. An existing file or
    directory at `save_path` is replaced only then.

    Args:
        model: A `torch.nn.Module` or a `tf.keras.Model` (e.g. one built with `fe.build`).
        save_path: Where to write: a file ('model.onnx', 'model.pt', 'model.pt2', 'model.tflite') or, for
            'saved_model', a directory.
        example_inputs: One input (a numpy array or a tensor of the model's framework, batch dimension first) or a
            tuple/list of them for a model taking several inputs.
        format: 'onnx', 'torchscript' or 'torch.export' for torch (default 'onnx'); 'saved_model', 'tflite' or
            'onnx' (through tf2onnx) for TensorFlow (default 'saved_model').
        atol: The largest absolute output difference accepted (default `DEFAULT_ATOL` = 1e-4).
        dynamic_batch: Whether the export accepts any batch size (default); False fixes the example's batch size.

    Returns:
        An `ExportResult` with the path, the format and the measured `max_abs_diff`.

    Raises:
        ValueError: If `model` is not a torch or TensorFlow model, or `format` is unknown for its framework.
        ExportVerificationError: If the export's outputs differ by more than `atol` (nothing is left at `save_path`).
        ImportError: If the runtime a format needs is not installed (the message names the extra).

    Example:
        >>> # result = fe.util.export_model(model, "lenet.onnx", np.zeros((1, 1, 28, 28), np.float32))
        >>> # result.max_abs_diff  -> 2.4e-07
    """
    backend = util_module_for(model, "export")
    if backend is None:
        raise ValueError(f"export_model: expected a torch.nn.Module or a tf.keras.Model, got "
                         f"{type(model).__module__}.{type(model).__qualname__}")
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not atol >= 0:
        raise ValueError(f"export_model: atol must be a non-negative number, got {atol!r}")
    if not isinstance(save_path, (str, os.PathLike)) or not os.fspath(save_path):
        raise ValueError(f"export_model: save_path must be a non-empty path, got {save_path!r}")
    format = backend.DEFAULT_FORMAT if format is None else str(format)
    if format not in backend.FORMATS:
        raise ValueError(f"export_model: unknown format {format!r} for a {backend.FRAMEWORK} model; expected one of "
                         f"{list(backend.FORMATS)}")
    path = os.path.abspath(os.fspath(save_path))
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    max_abs_diff = backend.export_model(model, path, example_inputs, format, float(atol), bool(dynamic_batch))
    return ExportResult(path=path, format=format, max_abs_diff=float(max_abs_diff), atol=float(atol),
                        dynamic_batch=bool(dynamic_batch))


# ---------------------------------------------------------------------------------------------- backend helpers
def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


@contextlib.contextmanager
def staged_path(path: str) -> Iterator[str]:
    """A temporary sibling of `path` to export into; moved onto `path` when the block succeeds, removed otherwise.

    Used by the backends' `export_model`: the block writes the export to the yielded path and verifies it; an
    exception (a failed check) leaves `path` as it was. A directory already at `path` is replaced as a whole.

    Args:
        path: The final file or directory.

    Yields:
        The temporary path (same directory and extension, so loaders that look at the suffix still work).
    """
    directory, name = os.path.split(path)
    stem, extension = os.path.splitext(name)
    temporary = os.path.join(directory, f".{stem}.tmp-{uuid.uuid4().hex[:8]}{extension}")
    try:
        yield temporary
    except BaseException:
        _remove(temporary)
        raise
    if os.path.isdir(temporary) and os.path.lexists(path):
        old = os.path.join(directory, f".{stem}.old-{uuid.uuid4().hex[:8]}{extension}")
        os.replace(path, old)
        os.replace(temporary, path)
        _remove(old)
    else:
        os.replace(temporary, path)


def max_difference(expected: Sequence[Any], actual: Sequence[Any], atol: float, what: str) -> float:
    """The largest absolute difference between two lists of output arrays, refusing a mismatch.

    Args:
        expected: The model's own outputs (numpy arrays), flattened in order.
        actual: The export's outputs, in the same order.
        atol: The tolerance.
        what: The export, for messages ('ONNX export').

    Returns:
        The largest absolute difference (0.0 for no outputs).

    Raises:
        ExportVerificationError: On a different number of outputs, different shapes, non-finite mismatches, or a
            difference above `atol`.
    """
    if len(expected) != len(actual):
        raise ExportVerificationError(f"{what} returns {len(actual)} outputs where the model returns {len(expected)}")
    worst = 0.0
    for index, (want, got) in enumerate(zip(expected, actual)):
        want, got = np.asarray(want), np.asarray(got)
        if want.shape != got.shape:
            raise ExportVerificationError(f"{what}: output {index} has shape {got.shape} where the model's has shape "
                                          f"{want.shape}")
        if want.size == 0:
            continue
        want64, got64 = want.astype(np.float64), got.astype(np.float64)
        same_nonfinite = (~np.isfinite(want64) & (want64 == got64)) | (np.isnan(want64) & np.isnan(got64))
        diff = np.where(same_nonfinite, 0.0, np.abs(want64 - got64))
        value = float(np.max(diff)) if diff.size else 0.0
        if not np.isfinite(value):
            value = float("inf")
        worst = max(worst, value)
    if not worst <= atol:
        raise ExportVerificationError(f"{what} differs from the model by up to {worst:.3g} (tolerance atol={atol:g}); "
                                      f"nothing was written. Pass a larger atol to accept it.")
    return worst
