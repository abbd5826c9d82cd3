"""Saving and loading tf models, optimizer state, learning rates, random state, and whole-System checkpoints."""
from __future__ import annotations

import os
from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.pipeline import Pipeline
from tf_testing import classifier_network, snapshot


def _model_fn() -> keras.Model:
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dropout(0.2),
                             keras.layers.Dense(3, activation="softmax")])


def _batches(count: int) -> List[Dict[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    return [{"x": rng.normal(size=(8, 4)).astype(np.float32), "y": rng.integers(0, 3, 8)} for _ in range(count)]


def _train(network: Any, batches: List[Dict[str, np.ndarray]]) -> None:
    with network(mode="train", epoch=1):
        for batch in batches:
            network.run_step(dict(batch))


def _predict(network: Any, x: np.ndarray) -> np.ndarray:
    return network.transform({"x": x, "y": np.zeros(len(x), np.int64)}, mode="eval")["y_pred"]


def test_save_then_load_restores_predictions_and_optimizer_state(tmp_path: "os.PathLike[str]") -> None:
    backend = get_backend("tf")
    model = build(model_fn=_model_fn, optimizer_fn="adam")
    network = classifier_network(model)
    batches = _batches(6)
    _train(network, batches[:3])
    files = backend.save_model(model, str(tmp_path), save_optimizer=True)
    assert files == ["model.weights.h5", "model_opt.npz"]
    assert all(os.path.exists(os.path.join(str(tmp_path), name)) for name in files)
    saved_prediction = _predict(network, batches[0]["x"])
    saved_state = snapshot(model.weights + model.optimizer.variables + model.non_trainable_variables)
    _train(network, batches[3:])
    assert not np.allclose(saved_prediction, _predict(network, batches[0]["x"]))
    backend.load_model(model, str(tmp_path), load_optimizer=True)
    np.testing.assert_array_equal(saved_prediction, _predict(network, batches[0]["x"]))
    for expected, restored in zip(saved_state, snapshot(model.weights + model.optimizer.variables +
                                                        model.non_trainable_variables)):
        np.testing.assert_array_equal(expected, restored)


def test_loading_weights_only_leaves_the_optimizer_alone(tmp_path: "os.PathLike[str]") -> None:
    backend = get_backend("tf")
    model = build(model_fn=_model_fn, optimizer_fn="adam")
    network = classifier_network(model)
    backend.save_model(model, str(tmp_path), save_optimizer=False)
    assert sorted(os.listdir(str(tmp_path))) == ["model.weights.h5"]
    _train(network, _batches(2))
    optimizer_state = snapshot(model.optimizer.variables)
    backend.load_model(model, str(tmp_path), load_optimizer=False)
    for expected, now in zip(optimizer_state, snapshot(model.optimizer.variables)):
        np.testing.assert_array_equal(expected, now)


def test_optimizer_state_that_does_not_fit_is_refused(tmp_path: "os.PathLike[str]") -> None:
    backend = get_backend("tf")
    backend.save_model(build(model_fn=_model_fn, optimizer_fn="sgd", model_name="net"), str(tmp_path), True)
    other = build(model_fn=_model_fn, optimizer_fn="adam", model_name="net")
    with pytest.raises(ValueError, match="optimizer 0 of model 'net' has"):
        backend.load_model(other, str(tmp_path), load_optimizer=True)


def test_learning_rate_changes_take_effect_in_the_traced_step_without_retracing() -> None:
    backend = get_backend("tf")
    model = build(model_fn=_model_fn, optimizer_fn="sgd")
    network = classifier_network(model)
    batches = _batches(2)
    _train(network, batches[:1])
    traces = network.trace_count
    backend.set_lr(model, 0.0)
    assert backend.get_lr(model) == 0.0
    before = snapshot(model.trainable_variables)
    _train(network, batches[1:])
    assert network.trace_count == traces
    for old, new in zip(before, snapshot(model.trainable_variables)):
        np.testing.assert_array_equal(old, new)
    with pytest.raises(ValueError, match="no .*optimizer"):
        backend.get_lr(build(model_fn=_model_fn, optimizer_fn=None))


@pytest.mark.keras3  # Keras 3's names (variable.path, keras.config, keras.random)
def test_random_state_round_trip() -> None:
    backend = get_backend("tf")
    tf.random.get_global_generator().normal([2])  # make sure the global generator exists
    keras.random.normal((2,))  # and Keras' global seed generator
    state = backend.get_rng_state()
    assert set(state) == {"tf_generator", "keras_seed_generator"}
    assert isinstance(state["tf_generator"]["state"], np.ndarray)
    first = (tf.random.get_global_generator().normal([3]).numpy(), keras.random.normal((3,)).numpy())
    backend.set_rng_state(state)
    second = (tf.random.get_global_generator().normal([3]).numpy(), keras.random.normal((3,)).numpy())
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_system_checkpoint_round_trip_resumes_exactly(tmp_path: "os.PathLike[str]") -> None:
    rng = np.random.default_rng(0)
    data = {"x": rng.normal(size=(64, 4)).astype(np.float32), "y": rng.integers(0, 3, 64)}
    pipeline = Pipeline(train_data=NumpyDataset(data), batch_size=16)
    model = build(model_fn=_model_fn, optimizer_fn="adam")
    network = classifier_network(model)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None)
    estimator.fit()
    checkpoint = os.path.join(str(tmp_path), "ckpt")
    estimator.system.save_state(checkpoint)
    assert {"model.weights.h5", "model_opt.npz"} <= set(os.listdir(checkpoint))
    np_state = np.random.get_state()
    at_save = snapshot(model.weights + model.optimizer.variables)
    estimator.system.total_epochs = 2
    estimator._start({"train"}, eager=False)  # an uninterrupted second epoch
    uninterrupted = snapshot(model.weights + model.optimizer.variables)
    estimator.system.load_state(checkpoint)
    assert estimator.system.epoch_idx == 1
    np.testing.assert_array_equal(np.random.get_state()[1], np_state[1])
    for saved, loaded in zip(at_save, snapshot(model.weights + model.optimizer.variables)):
        np.testing.assert_array_equal(saved, loaded)
    estimator.system.total_epochs = 2
    estimator._start({"train"}, eager=False)  # the resumed second epoch
    assert not np.array_equal(uninterrupted[0], at_save[0])
    for expected, resumed in zip(uninterrupted, snapshot(model.weights + model.optimizer.variables)):
        np.testing.assert_array_equal(expected, resumed)


def test_save_weights_writes_keras_weights_that_load_weights_reads_back(tmp_path) -> None:
    from fe_core.framework import get_backend
    from fe_core.build import build
    from fe_tf.architecture import LeNet
    backend = get_backend("tf")
    source = build(model_fn=LeNet, optimizer_fn="adam", model_name="src")
    target = build(model_fn=LeNet, optimizer_fn="adam", model_name="dst")
    path = backend.save_weights(source, str(tmp_path / f"src_best_ce.{backend.model_extension}"))
    assert path.endswith("src_best_ce.weights.h5")
    backend.load_weights(target, path)
    for got, want in zip(target.weights, source.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
