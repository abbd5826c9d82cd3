"""fe.util on TensorFlow values: to_number, get_type/get_shape (eager and in tf.function), move/detach, GPU count,
model parameters, and displays of tf images (channel last)."""
from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from fe_core.util import (count_params, detach_tensors, get_batch_size, get_model_parameters, get_num_gpus,
                          get_optimizer_name, get_shape, get_type, move_tensors_to_device, to_number)


def test_to_number_of_tensors_and_variables():
    assert to_number(tf.constant([1, 2, 3])).tolist() == [1, 2, 3]
    value = to_number(tf.Variable([[1.5, 2.0]]))
    assert isinstance(value, np.ndarray) and value.dtype == np.float32 and value.tolist() == [[1.5, 2.0]]
    widened = to_number(tf.constant([2.5], dtype=tf.bfloat16))
    assert widened.dtype == np.float32 and widened.tolist() == [2.5]
    scalar = to_number(tf.constant(4))
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar == 4

    @tf.function
    def traced(x):
        return to_number(x)

    with pytest.raises(ValueError, match="inside tf.function"):
        traced(tf.ones(2))


def test_type_and_shape_eager_and_inside_tf_function():
    assert get_type(tf.ones((10, 10), dtype="float16")) == "<dtype: 'float16'>"
    assert get_shape(tf.ones((3, 2, 2))) == [3, 2, 2]
    assert get_batch_size({"x": tf.ones((5, 2)), "y": np.ones(5)}) == 5
    seen = {}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def traced(x):
        seen["shape"] = get_shape(x)
        seen["type"] = get_type(x)
        seen["batch"] = get_batch_size({"x": x})
        return x

    traced(tf.ones((2, 3)))
    assert seen == {"shape": [None, 3], "type": "<dtype: 'float32'>", "batch": None}


def test_detach_stops_gradients():
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        out = detach_tensors({"y": [y], "keep": "s"})
        z = out["y"][0] * 2 + y
    assert float(tape.gradient(z, x)) == 6.0  # only through y, not through the detached copy
    assert out["keep"] == "s"

    @tf.function
    def traced(v):
        with tf.GradientTape() as inner:
            inner.watch(v)
            w = detach_tensors(v * v)
        return inner.gradient(w, v)

    assert traced(tf.constant(2.0)) is None


def test_move_tensors_to_cpu():
    moved = move_tensors_to_device({"a": tf.ones(2), "b": [tf.zeros(1), 1]}, "cpu")
    assert moved["a"].device.endswith("CPU:0") and moved["b"][0].device.endswith("CPU:0") and moved["b"][1] == 1
    assert move_tensors_to_device(tf.ones(1), "/CPU:0").numpy().tolist() == [1.0]


def test_gpu_count_with_tensorflow_loaded():
    assert get_num_gpus() == len(tf.config.list_physical_devices("GPU"))


def test_model_parameters_count_batch_norm_statistics_as_frozen():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2), tf.keras.layers.BatchNormalization()])
    assert get_model_parameters(model) == {"total_params": 16, "trainable_params": 12, "non_trainable_params": 4}
    assert count_params(model.trainable_weights) == 12
    assert get_optimizer_name(model) == "None"
    model.current_optimizer = tf.keras.optimizers.SGD()
    assert get_optimizer_name(model) == "SGD"


def test_displays_read_tf_images_channel_last():
    fe_display = pytest.importorskip("fe_core.util.display")
    image = tf.concat([tf.ones((4, 6, 1)), tf.zeros((4, 6, 2))], axis=-1)
    display = fe_display.ImageDisplay(image=image, bboxes=tf.constant([[0.0, 0.0, 2.0, 2.0]]), text=tf.constant("t"))
    assert display.image.shape == (4, 6, 3) and display.image[..., 0].min() == 1.0
    assert display.bboxes == [(0.0, 0.0, 2.0, 2.0, None)] and display.text == "t"
    batch = fe_display.BatchDisplay(image=tf.zeros((2, 5, 7, 1)), masks=tf.ones((2, 5, 7)))
    assert [item.image.shape for item in batch.items] == [(5, 7), (5, 7)]
    assert len(batch.prepare().data) == 4
