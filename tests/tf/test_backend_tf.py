"""`fe.backend` on TensorFlow tensors: the shared value table eagerly and inside `tf.function`, gradients with a tape,
mixed precision, the model functions on fe-built Keras models, conversions and random tensors."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import keras
import numpy as np
import pytest
import tensorflow as tf

import fe_core.backend as fb
from fe_core.build import build
from fe_tf._keras import dtype_policy, set_dtype_policy


def _load_cases() -> Any:
    name = "fe_backend_cases"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "core" / "backend_cases.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


cases = _load_cases()
TF_CASES = cases.cases_for("last")
IDS = [cases.case_id(case) for case in TF_CASES]
# inside tf.function: the first case of every function, and every case of the functions built from several ops
_BRANCHY = {"percentile", "focal_loss", "dice_score", "sparse_categorical_crossentropy", "binary_crossentropy",
            "categorical_crossentropy", "iwd", "normalize"}
TRACED_CASES = [case for index, case in enumerate(TF_CASES)
                if case.function in _BRANCHY or all(other.function != case.function for other in TF_CASES[:index])]


def to_tf(value: Any) -> Any:
    return cases.convert_arrays(value, tf.constant)


def check(case: Any, result: Any) -> None:
    np.testing.assert_allclose(np.asarray(result, dtype=np.float64), np.asarray(case.expected, dtype=np.float64),
                               atol=case.atol, rtol=1e-4)
    if case.expected_dtype:
        assert result.dtype == tf.as_dtype(case.expected_dtype)


@pytest.mark.parametrize("case", TF_CASES, ids=IDS)
def test_eager_values_match_the_reference(case: Any) -> None:
    result = getattr(fb, case.function)(*to_tf(case.args), **case.kwargs)
    if case.function != "check_nan":
        assert tf.is_tensor(result)
    check(case, result)


@pytest.mark.parametrize("case", TRACED_CASES, ids=[cases.case_id(case) for case in TRACED_CASES])
def test_traced_values_match_the_reference(case: Any) -> None:
    function = getattr(fb, case.function)
    traced = tf.function(lambda *args: function(*args, **case.kwargs))
    check(case, traced(*to_tf(case.args)))


def test_class_weights_as_a_static_hash_table() -> None:
    weights = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2]), tf.constant([2.0, 3.0])), default_value=1.0)
    true = tf.constant([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    pred = tf.constant([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]])
    expected = [0.44629, 0.10536, 1.07003]
    np.testing.assert_allclose(fb.categorical_crossentropy(pred, true, average_loss=False, class_weights=weights),
                               expected, atol=1e-4)
    np.testing.assert_allclose(fb.sparse_categorical_crossentropy(pred, tf.constant([1, 0, 2]), average_loss=False,
                                                                  class_weights=weights), expected, atol=1e-4)


@pytest.mark.parametrize("function, args", [
    ("reduce_mean", ()), ("reduce_sum", ()), ("reduce_max", ()), ("reduce_std", ()), ("exp", ()), ("abs", ()),
    ("tensor_sqrt", ()), ("zscore", ()), ("iwd", ()), ("lambertw", ()), ("clip_by_value", (0.2, 0.8)),
    ("maximum", (0.5,)), ("pow", (2.0,)), ("normalize", (0.5, 0.25, 1.0)), ("roll", (1, 0)), ("flip", ([1],)),
])
def test_gradients_flow_through_tensor_functions(function: str, args: tuple) -> None:
    x = tf.Variable([[0.3, 0.6], [0.9, 0.45]])
    with tf.GradientTape() as tape:
        out = getattr(fb, function)(x, *args)
        total = tf.reduce_sum(out * tf.constant([[1.0, 2.0], [3.0, 5.0]]))
    gradient = fb.get_gradient(total, x, tape=tape)
    assert gradient.shape == x.shape and bool(tf.reduce_all(tf.math.is_finite(gradient)))
    assert float(tf.reduce_sum(tf.abs(gradient))) > 0


def test_get_gradient_and_watch_with_a_tape() -> None:
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        first = fb.get_gradient(y, x, tape=tape)
        assert fb.get_gradient(first, x, tape=tape) is None  # not recorded: no second order
        first = fb.get_gradient(y, [x], tape=tape, higher_order=True)
        second = fb.get_gradient(first[0], x, tape=tape)
    np.testing.assert_allclose(first[0], [2.0, 4.0, 6.0])
    np.testing.assert_allclose(second, [2.0, 2.0, 2.0])
    constant = tf.ones((2, 2))
    with tf.GradientTape() as tape:
        watched = fb.watch(constant, tape=tape)
        total = fb.reduce_sum(watched * 3.0)
    np.testing.assert_allclose(fb.get_gradient(total, watched, tape=tape), np.full((2, 2), 3.0))
    with pytest.raises(ValueError, match="GradientTape"):
        fb.get_gradient(total, constant)
    with pytest.raises(ValueError, match="GradientTape"):
        fb.watch(constant)


def _dense() -> keras.Model:
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dropout(0.5),
                             keras.layers.Dense(2)])


def test_feed_forward_update_model_in_a_traced_step() -> None:
    model = build(_dense, "sgd")
    x, y = np.ones((4, 3), dtype="float32"), tf.constant([0, 1, 0, 1])

    @tf.function
    def step(inputs: tf.Tensor, labels: tf.Tensor) -> Any:
        with tf.GradientTape() as tape:
            loss = fb.sparse_categorical_crossentropy(fb.feed_forward(model, inputs, training=False), labels,
                                                      from_logits=True)
        gradients = fb.get_gradient(loss, model.trainable_variables, tape=tape)
        fb.update_model(model, gradients)
        return gradients

    before = [variable.numpy().copy() for variable in model.trainable_variables]
    gradients = step(tf.constant(x), y)
    for variable, old, gradient in zip(model.trainable_variables, before, gradients):
        np.testing.assert_allclose(variable.numpy(), old - 0.01 * gradient.numpy(), atol=1e-6)
    out = fb.feed_forward(model, x, training=False)
    np.testing.assert_allclose(out, fb.feed_forward(model, x, training=False))


def test_update_model_in_mixed_precision_applies_the_true_gradients() -> None:
    model = build(_dense, "sgd", mixed_precision=True)
    x = tf.ones((4, 3))
    with tf.GradientTape() as tape:
        pred = fb.feed_forward(model, x)
        loss = fb.sparse_categorical_crossentropy(pred, tf.constant([0, 1, 0, 1]), from_logits=True)
    assert pred.dtype == tf.float16 and loss.dtype == tf.float32
    gradients = fb.get_gradient(loss, model.trainable_variables, tape=tape)
    before = [variable.numpy().copy() for variable in model.trainable_variables]
    deferred: dict = {}
    fb.update_model(model, gradients, defer=True, deferred=deferred)
    np.testing.assert_array_equal(model.trainable_variables[0].numpy(), before[0])
    deferred["model"][0]()
    for variable, old, gradient in zip(model.trainable_variables, before, gradients):
        np.testing.assert_allclose(variable.numpy(), old - 0.01 * gradient.numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="trainable variables"):
        fb.update_model(model, gradients[:1])
    with pytest.raises(AssertionError, match="current_optimizer"):
        fb.update_model(_dense(), gradients)


def test_learning_rates_and_l2_regularization() -> None:
    model = build(_dense, "adam")
    assert fb.get_lr(model) == pytest.approx(0.001)
    fb.set_lr(model, 0.8, weight_decay=0.01)
    assert fb.get_lr(model) == pytest.approx(0.8) and model.current_optimizer.weight_decay == 0.01
    expected = 0.1 * sum(float(np.sum(v.numpy()**2)) for v in model.trainable_variables) / 2
    with tf.GradientTape() as tape:
        value = fb.l2_regularization(model, beta=0.1)
    assert float(value) == pytest.approx(expected, rel=1e-5)
    kernel = model.trainable_variables[0]
    np.testing.assert_allclose(tape.gradient(value, kernel), 0.1 * kernel.numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="optimizer"):
        fb.get_lr(build(_dense, None))


@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
def test_save_and_load_model(tmp_path: Path) -> None:
    model = build(_dense, "adam", model_name="net")
    with tf.GradientTape() as tape:
        loss = fb.reduce_sum(fb.feed_forward(model, tf.ones((2, 3))))
    fb.update_model(model, fb.get_gradient(loss, model.trainable_variables, tape=tape))
    path = fb.save_model(model, str(tmp_path / "out"), model_name="test", save_optimizer=True,
                         save_architecture=True)
    assert path == str(tmp_path / "out" / "test.h5") and model.model_name == "net"  # FastEstimator's '.h5' name
    assert sorted(os.listdir(tmp_path / "out")) == ["test.h5", "test.keras", "test_opt.npz"]
    fresh = build(_dense, "adam", model_name="other")
    fb.load_model(fresh, str(tmp_path / "out" / "test.weights.h5"), load_optimizer=True)  # Keras 3's name works too
    for mine, theirs in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert int(fresh.current_optimizer.iterations.numpy()) == 1 and fresh.model_name == "other"
    restored = keras.models.load_model(str(tmp_path / "out" / "test.keras"))
    np.testing.assert_allclose(restored(tf.ones((1, 3)), training=False), model(tf.ones((1, 3)), training=False))
    with pytest.raises(FileNotFoundError):
        fb.load_model(fresh, str(tmp_path / "missing.weights.h5"))


def test_conversions_between_numpy_and_tf() -> None:
    data = {"x": np.ones((10, 15)), "y": [np.ones(4, dtype="int8"), 2.5], "z": None}
    tensors = fb.to_tensor(data, "tf")
    assert tf.is_tensor(tensors["x"]) and tensors["y"][0].dtype == tf.int8 and tensors["z"] is None
    assert fb.to_type(tensors)["x"] == tf.float64
    back = fb.to_tensor(tensors, "np")
    assert isinstance(back["x"], np.ndarray) and back["y"][0].dtype == np.int8
    cast = fb.cast({"x": tf.ones((2, 2)), "y": [tf.ones(4)]}, "uint8")
    assert fb.to_type(cast) == {"x": tf.uint8, "y": [tf.uint8]}
    assert fb.cast(tf.ones(2), tf.ones(1, dtype=tf.int32)).dtype == tf.int32
    assert fb.to_shape({"a": tf.ones((2, 3))}, add_batch=True) == {"a": (None, 2, 3)}
    assert fb.convert_tensor_precision(tf.ones(2, dtype=tf.float64)).dtype == tf.float32
    policy = dtype_policy()
    set_dtype_policy("mixed_float16")  # keras.config's on Keras 3, tf-keras' mixed_precision global policy on Keras 2
    try:
        assert fb.convert_tensor_precision(tf.ones(2)).dtype == tf.float16
    finally:
        set_dtype_policy(policy)


def test_shapes_known_and_unknown_inside_tf_function() -> None:
    image = tf.random.uniform((2, 12, 10, 3))
    assert fb.get_shape(image) == (2, 12, 10, 3) and fb.get_image_dims(image) == (3, 12, 10)

    @tf.function(input_signature=[tf.TensorSpec((None, 4), tf.float32)])
    def batch_size(x: tf.Tensor) -> tf.Tensor:
        size, width = fb.get_shape(x)
        assert width == 4
        return size

    assert int(batch_size(tf.ones((7, 4)))) == 7


def test_check_nan_inside_tf_function_is_a_tensor() -> None:
    traced = tf.function(fb.check_nan)
    assert bool(traced(tf.constant([1.0, np.nan]))) is True
    assert bool(traced(tf.constant([1.0, 2.0]))) is False


def test_resize_3d_modes() -> None:
    volume = tf.reshape(tf.range(8, dtype=tf.float32), (1, 2, 2, 2, 1))
    nearest = fb.resize_3d(volume, [4, 4, 4])
    np.testing.assert_array_equal(nearest.numpy(), fb.resize_3d(volume.numpy(), [4, 4, 4]))
    smooth = fb.resize_3d(volume, [3, 5, 4], resize_mode="bilinear")
    assert smooth.shape == (1, 3, 5, 4, 1) and smooth.dtype == tf.float32


def test_random_tensors() -> None:
    like = tf.zeros((2, 3))
    normal = fb.random_normal_like(like, mean=5.0, std=0.1)
    assert normal.dtype == tf.float32 and abs(float(tf.reduce_mean(normal)) - 5.0) < 0.2
    uniform = fb.random_uniform_like(tf.zeros(1000), minval=-5.0, maxval=-3.0, dtype="float64")
    assert uniform.dtype == tf.float64 and float(tf.reduce_min(uniform)) >= -5.0
    assert float(tf.reduce_max(uniform)) < -3.0
