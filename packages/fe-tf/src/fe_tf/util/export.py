"""The TensorFlow half of `fe.util.export_model`: SavedModel and TFLite, each checked on load.

* 'saved_model': Keras 3's `model.export(..., format="tf_saved_model")` (tf-keras: `tf.saved_model.save` of a
  `serve` function); checked with `tf.saved_model.load(path).serve`.
* 'tflite': `tf.lite.TFLiteConverter.from_saved_model` of that SavedModel (builtin TFLite ops, plus TensorFlow ops
  where a model needs them); checked with `tf.lite.Interpreter`, resizing the batch dimension. (TensorFlow 2.21
  deprecates `tf.lite.Interpreter` in favour of the `ai-edge-litert` package, which reads the same files.)
* 'onnx': tf2onnx (1.17) converts the same serving function (`tf2onnx.convert.from_function`; its `from_keras`
  does not understand Keras 3 models); checked with onnxruntime. tf2onnx covers the common layers (convolutions,
  dense, normalization, pooling, activations); a model using an op it cannot convert raises its error. The
  dynamic batch dimension is named 'batch' in the file, as torch exports name it (tf2onnx would call it 'unk__48').

SavedModel and TFLite need only TensorFlow; ONNX needs `pip install "fe-tf[export]"` (tf2onnx, onnx, onnxruntime).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Sequence, Tuple

import contextlib
import importlib
import os
import tempfile

import numpy as np
import tensorflow as tf

from fe_core.install_hint import install_command
from fe_core.util.export import max_difference, staged_path
from fe_tf._keras import KERAS2, model_types

__all__ = ["export_model", "FORMATS", "DEFAULT_FORMAT", "FRAMEWORK", "ONNX_OPSET", "BATCH_DIM", "name_batch_dimension"]

FRAMEWORK = "tf"
FORMATS = ("saved_model", "tflite", "onnx")
DEFAULT_FORMAT = "saved_model"
#: The ONNX opset TensorFlow models are converted to (onnxruntime runs it; tf2onnx 1.17 supports up to 18).
ONNX_OPSET = 17


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"Exporting a TensorFlow model to ONNX needs {module}, which is not installed: "
                          f"{install_command('fe-tf', 'export')}") from error


def _as_inputs(example_inputs: Any) -> Tuple[np.ndarray, ...]:
    items = tuple(example_inputs) if isinstance(example_inputs, (list, tuple)) else (example_inputs,)
    if not items:
        raise ValueError("export_model: example_inputs is empty")
    return tuple(np.asarray(item.numpy() if hasattr(item, "numpy") else item) for item in items)


def _flatten(outputs: Any) -> List[np.ndarray]:
    if isinstance(outputs, dict):
        return [array for key in sorted(outputs) for array in _flatten(outputs[key])]
    if isinstance(outputs, (list, tuple)):
        return [array for value in outputs for array in _flatten(value)]
    return [np.asarray(outputs.numpy() if hasattr(outputs, "numpy") else outputs)]


def _specs(inputs: Sequence[np.ndarray], dynamic: bool) -> List[tf.TensorSpec]:
    return [tf.TensorSpec(shape=(None if dynamic else x.shape[0], *x.shape[1:]), dtype=tf.as_dtype(x.dtype),
                          name=f"input_{index}") for index, x in enumerate(inputs)]


def _call(model: Any, inputs: Sequence[Any]) -> Any:
    return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)


def _serving_function(model: Any, specs: List[tf.TensorSpec]) -> Any:
    @tf.function(input_signature=specs)
    def serve(*args: tf.Tensor) -> Any:
        return _call(model, args)
    return serve


def _export_saved_model(model: Any, path: str, inputs: Sequence[np.ndarray], dynamic: bool) -> None:
    specs = _specs(inputs, dynamic)
    if not KERAS2 and hasattr(model, "export"):
        model.export(path, format="tf_saved_model", input_signature=specs, verbose=False)
        return
    module = tf.Module()
    module.model = model
    module.serve = _serving_function(model, specs)
    tf.saved_model.save(module, path, signatures={"serving_default": module.serve})


def _run_saved_model(path: str) -> Callable[[Sequence[np.ndarray]], List[np.ndarray]]:
    loaded = tf.saved_model.load(path)

    def run(inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        return _flatten(loaded.serve(*(tf.constant(x) for x in inputs)))
    return run


def _export_tflite(model: Any, path: str, inputs: Sequence[np.ndarray], dynamic: bool) -> None:
    # through a SavedModel: converting the serving function's concrete function directly loses Keras 3 variables
    # (the converted model computes NaN)
    with tempfile.TemporaryDirectory() as directory:
        saved = os.path.join(directory, "saved_model")
        _export_saved_model(model, saved, inputs, dynamic)
        converter = tf.lite.TFLiteConverter.from_saved_model(saved)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS, tf.lite.OpsSet.SELECT_TF_OPS]
        flat = converter.convert()
    with open(path, "wb") as file:
        file.write(flat)


def _run_tflite(path: str) -> Callable[[Sequence[np.ndarray]], List[np.ndarray]]:
    def run(inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        interpreter = tf.lite.Interpreter(model_path=path)
        details = sorted(interpreter.get_input_details(), key=lambda item: item["name"])
        for detail, x in zip(details, inputs):
            if tuple(detail["shape"]) != x.shape:
                interpreter.resize_tensor_input(detail["index"], list(x.shape))
        interpreter.allocate_tensors()
        for detail, x in zip(details, inputs):
            interpreter.set_tensor(detail["index"], x.astype(detail["dtype"]))
        interpreter.invoke()
        outputs = sorted(interpreter.get_output_details(), key=lambda item: item["index"])
        return [interpreter.get_tensor(detail["index"]) for detail in outputs]
    return run


#: The name of the dynamic batch dimension in ONNX files (as torch exports name it).
BATCH_DIM = "batch"


def name_batch_dimension(graph: Any, name: str = BATCH_DIM) -> None:
    """Name the first dimension of the graph's inputs and outputs `name` where it is dynamic (tf2onnx calls it
    'unk__48'), and every other use of the names it had.

    Args:
        graph: An `onnx.GraphProto`, changed in place.
        name: The dimension's name.
    """
    values = [*graph.input, *graph.output, *graph.value_info]
    renamed = set()
    for value in [*graph.input, *graph.output]:
        dims = value.type.tensor_type.shape.dim
        if dims and not dims[0].HasField("dim_value"):
            if dims[0].dim_param:
                renamed.add(dims[0].dim_param)
            dims[0].dim_param = name
    for value in values:
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_param") and dim.dim_param in renamed:
                dim.dim_param = name


def _export_onnx(model: Any, path: str, inputs: Sequence[np.ndarray], dynamic: bool) -> None:
    converter = _import("tf2onnx")
    onnx = _import("onnx")
    specs = _specs(inputs, dynamic)
    proto, _ = converter.convert.from_function(_serving_function(model, specs), input_signature=specs,
                                               opset=ONNX_OPSET)
    if dynamic:
        name_batch_dimension(proto.graph)
    onnx.save(proto, path)


def _run_onnx(path: str) -> Callable[[Sequence[np.ndarray]], List[np.ndarray]]:
    runtime = _import("onnxruntime")
    session = runtime.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [node.name for node in session.get_inputs()]

    def run(inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        return list(session.run(None, dict(zip(names, inputs))))
    return run


_FORMATS = {
    "saved_model": (_export_saved_model, _run_saved_model, "SavedModel export"),
    "tflite": (_export_tflite, _run_tflite, "TFLite export"),
    "onnx": (_export_onnx, _run_onnx, "ONNX export"),
}


def export_model(model: Any, path: str, example_inputs: Any, format: str,  # pylint: disable=redefined-builtin
                 atol: float, dynamic_batch: bool) -> float:
    """Export `model` to `path` in `format`, verified against `model(x, training=False)` (see
    `fe.util.export_model`).

    Returns:
        The largest absolute output difference measured.
    """
    if not isinstance(model, model_types()):
        raise ValueError(f"export_model: expected a tf.keras.Model, got {type(model).__qualname__}")
    with _without_global_strategy():
        return _export_verified(model, path, example_inputs, format, atol, dynamic_batch)


@contextlib.contextmanager
def _without_global_strategy() -> Iterator[None]:
    """Clear a strategy set with `tf.distribute.experimental_set_strategy` (fe sets MultiWorkerMirroredStrategy or
    MirroredStrategy so) while exporting: the export is written and loaded back by one process, and loading it under
    the strategy makes distributed variables whose restored functions refuse to run (or wait for other workers)."""
    strategy = tf.distribute.get_strategy() if tf.distribute.has_strategy() else None
    try:
        tf.distribute.experimental_set_strategy(None)
    except (RuntimeError, ValueError):  # inside `with strategy.scope():`, where it cannot be cleared
        strategy = None
    try:
        yield
    finally:
        if strategy is not None:
            tf.distribute.experimental_set_strategy(strategy)


def _export_verified(model: Any, path: str, example_inputs: Any, format: str,  # pylint: disable=redefined-builtin
                     atol: float, dynamic_batch: bool) -> float:
    export, load, what = _FORMATS[format]
    inputs = _as_inputs(example_inputs)
    checks = [inputs, tuple(np.concatenate([x, x], axis=0) for x in inputs)] if dynamic_batch else [inputs]
    expected = [_flatten(_call(model, [tf.constant(x) for x in batch])) for batch in checks]
    with staged_path(path) as staging:
        export(model, staging, inputs, dynamic_batch)
        run = load(staging)
        worst = 0.0
        for batch, want in zip(checks, expected):
            worst = max(worst, max_difference(want, run(batch), atol, what))
    return worst
