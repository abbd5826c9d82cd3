"""`build` with Keras models: optimizers, names, weights, mixed precision, architectures, backend registration."""
from __future__ import annotations

import os

import keras
import numpy as np
import pytest

from fe_core.framework import backend_for_model, get_backend
from fe_core.build import build
from fe_core.schedule import EpochScheduler, RepeatScheduler
from fe_tf import LeNet, ResNet9, TFBackend
from tf_testing import dense_model


@pytest.mark.parametrize("name, optimizer_class, learning_rate", [
    ("adadelta", keras.optimizers.Adadelta, 0.001), ("adagrad", keras.optimizers.Adagrad, 0.001),
    ("adam", keras.optimizers.Adam, 0.001), ("adamax", keras.optimizers.Adamax, 0.001),
    ("rmsprop", keras.optimizers.RMSprop, 0.001), ("sgd", keras.optimizers.SGD, 0.01)])
def test_optimizer_names_give_keras_optimizers_with_fastestimator_defaults(name: str, optimizer_class: type,
                                                                           learning_rate: float) -> None:
    model = build(model_fn=dense_model, optimizer_fn=name)
    assert type(model.optimizer) is optimizer_class
    assert model.current_optimizer is model.optimizer
    assert get_backend("tf").get_lr(model) == pytest.approx(learning_rate)
    assert model.fe_compiled and model.model_name == "model" and model.mixed_precision is False


@pytest.mark.keras3  # Keras 3's names (variable.path, keras.config, keras.random)
def test_optimizers_are_built_before_the_first_step() -> None:
    model = build(model_fn=dense_model, optimizer_fn="adam")
    slots = [variable for variable in model.optimizer.variables if "momentum" in variable.path]
    assert len(slots) == len(model.trainable_variables)


def test_optimizer_functions_none_and_schedulers() -> None:
    custom = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=0.5))
    assert get_backend("tf").get_lr(custom) == pytest.approx(0.5)
    untrained = build(model_fn=dense_model, optimizer_fn=None)
    assert untrained.optimizer is None and untrained.current_optimizer is None
    scheduled = build(model_fn=dense_model, optimizer_fn=EpochScheduler({1: "adam", 3: "sgd", 5: None}))
    assert isinstance(scheduled.optimizer, EpochScheduler)
    assert isinstance(scheduled.optimizer.get_current_value(2), keras.optimizers.Adam)
    assert isinstance(scheduled.optimizer.get_current_value(4), keras.optimizers.SGD)
    assert scheduled.optimizer.get_current_value(6) is None
    assert scheduled.current_optimizer is scheduled.optimizer.get_current_value(1)
    repeated = build(model_fn=dense_model, optimizer_fn=RepeatScheduler(["sgd", "adam"]))
    assert isinstance(repeated.optimizer.get_current_value(3), keras.optimizers.SGD)


def test_model_names_count_across_builds_and_can_be_given() -> None:
    first, second = build(model_fn=lambda: [dense_model(), dense_model()], optimizer_fn=["adam", "sgd"])
    third = build(model_fn=dense_model, optimizer_fn="adam")
    named = build(model_fn=dense_model, optimizer_fn="adam", model_name="encoder")
    assert [first.model_name, second.model_name, third.model_name, named.model_name] == [
        "model", "model1", "model2", "encoder"]


def test_bad_optimizer_arguments_are_explained() -> None:
    with pytest.raises(ValueError, match="Unknown optimizer 'adamw'.*'model'"):
        build(model_fn=dense_model, optimizer_fn="adamw")
    with pytest.raises(TypeError, match="optimizer instance"):
        build(model_fn=dense_model, optimizer_fn=keras.optimizers.Adam())
    with pytest.raises(TypeError, match="without arguments"):
        build(model_fn=dense_model, optimizer_fn=lambda params: keras.optimizers.Adam())
    with pytest.raises(TypeError, match="must return a Keras optimizer"):
        build(model_fn=dense_model, optimizer_fn=lambda: "adam")


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # inside Keras' save_weights
def test_weights_path_loads_weights(tmp_path: "os.PathLike[str]") -> None:
    source = dense_model()
    path = os.path.join(str(tmp_path), "source.weights.h5")
    source.save_weights(path)
    model = build(model_fn=dense_model, optimizer_fn="adam", weights_path=path)
    for expected, loaded in zip(source.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(expected, loaded)
    with pytest.raises(FileNotFoundError, match="'model1'"):
        build(model_fn=dense_model, optimizer_fn="adam", weights_path=os.path.join(str(tmp_path), "missing.weights.h5"))


@pytest.mark.keras3  # Keras 3's names (variable.path, keras.config, keras.random)
def test_mixed_precision_builds_float16_layers_with_loss_scaling_and_restores_the_policy() -> None:
    seen = []

    def model_fn() -> keras.Model:
        seen.append(keras.config.dtype_policy().name)
        return dense_model()

    model = build(model_fn=model_fn, optimizer_fn="adam", mixed_precision=True)
    assert seen == ["mixed_float16"]
    assert keras.config.dtype_policy().name == "float32"
    assert model.layers[-1].compute_dtype == "float16"
    assert isinstance(model.optimizer, keras.mixed_precision.LossScaleOptimizer)
    assert model.mixed_precision is True
    build(model_fn=model_fn, optimizer_fn="adam")
    assert seen[-1] == "float32"


def test_keras_models_belong_to_the_tf_backend() -> None:
    backend = get_backend("tf")
    assert isinstance(backend, TFBackend)
    assert backend_for_model(dense_model()) is backend
    assert not backend.owns_model(object())
    assert [reducer.name for reducer in backend.state_reducers()] == ["tf.MirroredStrategy", "tf.Variable", "tf.Tensor"]


def test_architectures() -> None:
    lenet = LeNet()
    output = lenet(np.zeros((2, 28, 28, 1), np.float32))
    assert tuple(output.shape) == (2, 10)
    np.testing.assert_allclose(output.numpy().sum(axis=1), 1.0, rtol=1e-5)
    assert [type(layer).__name__ for layer in lenet.layers if layer.weights] == [
        "Conv2D", "Conv2D", "Conv2D", "Dense", "Dense"]
    assert tuple(LeNet(input_shape=(32, 32, 3), classes=4).output_shape) == (None, 4)
    resnet = ResNet9(input_size=(16, 16, 3), classes=5)
    assert tuple(resnet(np.zeros((1, 16, 16, 3), np.float32)).shape) == (1, 5)
    assert len([layer for layer in resnet.layers if isinstance(layer, keras.layers.Conv2D)]) == 8
    with pytest.raises(ValueError, match="at least 18"):
        LeNet(input_shape=(10, 10, 1))
    with pytest.raises(ValueError, match="at least 16"):
        ResNet9(input_size=(8, 8, 3))


def test_learning_rates_read_back_as_the_value_set_not_its_float32_expansion() -> None:
    model = build(model_fn=LeNet, optimizer_fn="adam")  # Keras keeps 0.001 in a float32 variable
    lr = get_backend("tf").get_lr(model)
    assert type(lr) is float and lr == 0.001 and str(lr) == "0.001"  # not 0.0010000000474974513
    get_backend("tf").set_lr(model, 0.0003)
    assert str(get_backend("tf").get_lr(model)) == "0.0003"
