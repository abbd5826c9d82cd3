"""`ModelExporter`: export the trained (or best) model for serving at the end of training, verified."""
from __future__ import annotations

import os
import warnings
from typing import Any, Optional

from fe_core.data import Data
from fe_core.distributed.communicator import is_main_process
from fe_core.export import fe_export
from fe_core.framework.registry import backend_for_model
from fe_core.trace.trace import Trace
from fe_core.util._framework_util import util_module_for
from fe_core.util.export import DEFAULT_ATOL, ExportResult, ExportVerificationError, export_model

__all__ = ["ModelExporter", "EXTENSIONS"]

#: The file extension of each format ('saved_model' is a directory).
EXTENSIONS = {"onnx": ".onnx", "torchscript": ".pt", "torch.export": ".pt2", "saved_model": "", "tflite": ".tflite"}


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", None) or type(model).__name__)


@fe_export("fe.trace.io.model_exporter.ModelExporter", "fe.trace.io.ModelExporter")
class ModelExporter(Trace):
    """Export a model with `fe.util.export_model` when training ends, and check the export.

    The export happens in `on_end` of `fit()`, after every other trace that writes outputs: with a `BestModelSaver`
    whose `load_best_final=True` the model then holds the best weights, so the best model is exported; otherwise the
    final one. The file is `<save_dir>/<export_name><extension>` ('.onnx', '.pt' for TorchScript, '.pt2' for
    torch.export, '.tflite'; a directory for 'saved_model'). The export is verified as `export_model` does (loaded with
    its runtime and compared with the model on `example_inputs`); the measured difference is logged on the Finish
    line as `<export_name>_export_diff`. An export that fails its check is reported with a warning, writes nothing,
    and does not fail the finished training run. Only rank 0 of a data-parallel run exports.

    `MLflowLogger(log_models=True)` uploads the export as an artifact (`export_path`).

    Args:
        model: The model to export (a torch.nn.Module or tf.keras.Model given to `fe.build`).
        save_dir: The directory to write into (created if missing).
        example_inputs: What the model takes, batch dimension first (an array, or a tuple of arrays).
        format: The format (see `fe.util.export_model`; None: 'onnx' for torch, 'saved_model' for TensorFlow).
        atol: The largest accepted output difference.
        dynamic_batch: Whether the export accepts any batch size.
        export_name: The file name without extension (default: the model's name).

    Attributes:
        export_path: The exported file or directory once written (else None).
        result: The `ExportResult` once written (else None).

    Example:
        >>> # traces = [BestModelSaver(model, save_dir, metric="accuracy", save_best_mode="max", load_best_final=True),
        >>> #           ModelExporter(model, "/tmp/export", np.zeros((1, 1, 28, 28), np.float32), format="onnx")]
    """

    def __init__(self,
                 model: Any,
                 save_dir: str,
                 example_inputs: Any,
                 format: Optional[str] = None,  # pylint: disable=redefined-builtin  (export_model's name)
                 atol: float = DEFAULT_ATOL,
                 dynamic_batch: bool = True,
                 export_name: Optional[str] = None) -> None:
        if not isinstance(save_dir, (str, os.PathLike)) or not os.fspath(save_dir):
            raise ValueError(f"ModelExporter save_dir must be a non-empty path, got {save_dir!r}")
        if format is not None and format not in EXTENSIONS:
            raise ValueError(f"ModelExporter format must be one of {list(EXTENSIONS)} or None, got {format!r}")
        if export_name is not None and (not isinstance(export_name, str) or not export_name or
                                        os.sep in export_name):
            raise ValueError(f"ModelExporter export_name must be a file name without directories, got {export_name!r}")
        self.model = model
        self.export_name = export_name
        super().__init__(inputs="*", outputs=f"{self._name()}_export_diff", mode="train")
        self.save_dir = os.fspath(save_dir)
        self.example_inputs = example_inputs
        self.format = format
        self.atol = atol
        self.dynamic_batch = dynamic_batch
        self.export_path: Optional[str] = None
        self.result: Optional[ExportResult] = None

    def _name(self) -> str:
        return self.export_name or _model_name(self.model)

    def get_state(self) -> dict:
        return {}  # the export is made from the model at the end; nothing to carry across a resume

    def _sharded(self) -> bool:
        """Whether the model is sharded across processes (its backend says so): no process can export it whole."""
        backend = backend_for_model(self.model)
        check = getattr(backend, "is_sharded", None)
        return bool(callable(check) and check(self.model))

    def on_begin(self, data: Data) -> None:
        if self._sharded() and is_main_process():
            print(f"FastEstimator-ModelExporter: {_model_name(self.model)} is sharded across processes, so it will "
                  f"not be exported at the end of this run; export the full-weights file a ModelSaver or "
                  f"BestModelSaver writes from one process (build(..., weights_path=...), then fe.util.export_model)")

    def on_end(self, data: Data) -> None:
        if not is_main_process() or self._sharded():
            return
        export_format = self.format
        if export_format is None:
            backend = util_module_for(self.model, "export")
            export_format = backend.DEFAULT_FORMAT if backend is not None else "onnx"
        path = os.path.join(self.save_dir, self._name() + EXTENSIONS[export_format])
        try:
            self.result = export_model(self.model, path, self.example_inputs, format=export_format, atol=self.atol,
                                       dynamic_batch=self.dynamic_batch)
        except ExportVerificationError as error:
            warnings.warn(f"ModelExporter: {error}", RuntimeWarning)
            print(f"FastEstimator-ModelExporter: export of {_model_name(self.model)} refused: {error}")
            return
        self.export_path = self.result.path
        print(f"FastEstimator-ModelExporter: exported {_model_name(self.model)} to {self.export_path} "
              f"({export_format}, max abs diff {self.result.max_abs_diff:.3g})")
        data.write_with_log(self.outputs[0], self.result.max_abs_diff)
