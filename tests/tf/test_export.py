"""fe.util.export_model for TensorFlow models: SavedModel, TFLite and ONNX (tf2onnx), each loaded back and checked."""
from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

from fe_core.util.export import ExportVerificationError, export_model
from fe_tf._keras import keras
from fe_tf.architecture.lenet import LeNet


def bn_net() -> keras.Model:
    """BatchNormalization and Dropout: an export must use the moving statistics and no dropout."""
    inputs = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(4, 3)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.Dropout(0.5)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(x))
    for _ in range(3):  # move the moving statistics away from their initial values
        model(tf.random.normal((8, 8, 8, 1)) * 2 + 1, training=True)
    return model


def lenet() -> keras.Model:
    return LeNet(input_shape=(28, 28, 1))


MODELS = [(lenet, (2, 28, 28, 1)), (bn_net, (2, 8, 8, 1))]


def data(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.slow  # tracing and saving a SavedModel takes a few seconds per model
@pytest.mark.parametrize("make, shape", MODELS)
def test_saved_model_export_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    model = make()
    result = export_model(model, str(tmp_path / "served"), data(shape))  # 'saved_model' is TensorFlow's default
    assert result.format == "saved_model" and os.path.isdir(result.path) and result.max_abs_diff <= 1e-4
    loaded = tf.saved_model.load(result.path)
    bigger = data((5, *shape[1:]), seed=1)
    np.testing.assert_allclose(np.asarray(loaded.serve(tf.constant(bigger))), model(bigger, training=False).numpy(),
                               atol=1e-5)
    assert os.listdir(tmp_path) == ["served"]


@pytest.mark.slow  # the TFLite converter takes a few seconds per model
@pytest.mark.parametrize("make, shape", MODELS)
def test_tflite_export_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    model = make()
    result = export_model(model, str(tmp_path / "model.tflite"), data(shape), format="tflite")
    assert result.format == "tflite" and result.max_abs_diff <= 1e-4
    interpreter = tf.lite.Interpreter(model_path=result.path)
    bigger = data((3, *shape[1:]), seed=1)
    interpreter.resize_tensor_input(interpreter.get_input_details()[0]["index"], list(bigger.shape))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], bigger)
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_allclose(got, model(bigger, training=False).numpy(), atol=1e-4)


@pytest.mark.slow  # tf2onnx converts through a frozen graph (a few seconds per model)
@pytest.mark.parametrize("make, shape", MODELS)
def test_onnx_export_through_tf2onnx_is_verified_and_takes_any_batch_size(tmp_path, make, shape):
    import onnxruntime
    model = make()
    result = export_model(model, str(tmp_path / "model.onnx"), tf.constant(data(shape)), format="onnx")
    assert result.format == "onnx" and result.max_abs_diff <= 1e-4
    session = onnxruntime.InferenceSession(result.path, providers=["CPUExecutionProvider"])
    bigger = data((4, *shape[1:]), seed=1)
    got = session.run(None, {session.get_inputs()[0].name: bigger})[0]
    np.testing.assert_allclose(got, model(bigger, training=False).numpy(), atol=1e-4)


class Drifting(keras.Model):
    """A model whose export computes something else than the model: a python counter frozen by tracing."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def call(self, x, training=False):
        self.calls += 1
        return x * float(self.calls)


def test_an_export_beyond_the_tolerance_is_refused_and_leaves_nothing(tmp_path):
    target = tmp_path / "model.tflite"
    target.write_bytes(b"previous")
    with pytest.raises(ExportVerificationError, match=r"TFLite export differs from the model by up to"):
        export_model(Drifting(), str(target), np.ones((2, 3), np.float32), format="tflite")
    assert os.listdir(tmp_path) == ["model.tflite"] and target.read_bytes() == b"previous"


def test_a_fixed_batch_export_when_asked(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    result = export_model(model, str(tmp_path / "model.tflite"), np.ones((3, 4), np.float32), format="tflite",
                          dynamic_batch=False)
    assert not result.dynamic_batch and result.max_abs_diff <= 1e-5
    interpreter = tf.lite.Interpreter(model_path=result.path)
    assert list(interpreter.get_input_details()[0]["shape_signature"]) == [3, 4]


def test_unknown_formats_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'torchscript' for a tf model"):
        export_model(lenet(), str(tmp_path / "m"), data((1, 28, 28, 1)), format="torchscript")


@pytest.mark.slow  # a TF fit plus a TFLite conversion (several seconds)
def test_model_exporter_exports_the_trained_keras_model_at_the_end_of_fit(tmp_path, capsys):
    from fe_core.build import build
    from fe_core.dataset import NumpyDataset
    from fe_core.estimator import Estimator
    from fe_core.network import make_network
    from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
    from fe_core.pipeline import Pipeline
    from fe_core.trace.io import ModelExporter
    model = build(model_fn=lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                                                     keras.layers.Dense(1)]),
                  optimizer_fn="adam", model_name="reg")
    x = data((24, 3))
    y = x[:, :1] - x[:, 1:2]
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=8)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    exporter = ModelExporter(model, str(tmp_path), x[:2], format="tflite")
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=[exporter], log_steps=2).fit()
    assert exporter.export_path == str(tmp_path / "reg.tflite") and exporter.result.max_abs_diff <= 1e-4
    assert "reg_export_diff" in capsys.readouterr().out
    interpreter = tf.lite.Interpreter(model_path=exporter.export_path)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x[:1])
    interpreter.invoke()
    np.testing.assert_allclose(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]),
                               model(x[:1], training=False).numpy(), atol=1e-4)


@pytest.mark.slow  # tf2onnx converts through a frozen graph (a few seconds)
def test_onnx_export_names_the_batch_dimension_batch_as_torch_exports_do(tmp_path):
    import onnx  # issue 37 item 12: not 'unk__48'
    result = export_model(bn_net(), str(tmp_path / "model.onnx"), data((2, 8, 8, 1)), format="onnx")
    graph = onnx.load(result.path).graph
    for value in [*graph.input, *graph.output]:
        dims = value.type.tensor_type.shape.dim
        assert dims[0].dim_param == "batch", value
    params = {dim.dim_param for value in [*graph.input, *graph.output, *graph.value_info]
              for dim in value.type.tensor_type.shape.dim}
    assert not any(param.startswith("unk__") for param in params), params
