"""Training with TFNetwork: LeNet learns, traces are reused across epochs, eager equals static, warmup is harmless."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import keras
import numpy as np
import pytest

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.trace import Trace
from fe_tf import LeNet, TFNetwork
from tf_testing import build_dense, classifier_network, make_images, snapshot


def accuracy(network: Any, pipeline: Pipeline) -> float:
    results = network.transform(pipeline, mode="eval")
    return float(np.mean(np.concatenate([np.argmax(r["y_pred"], axis=-1) == r["y"] for r in results])))


class TraceCounter(Trace):
    """Records the network's trace count at the end of every epoch (after its evaluation)."""

    def __init__(self, network: TFNetwork, mode: str = "eval") -> None:
        super().__init__(mode=mode)
        self.network = network
        self.counts: List[int] = []
        self.configurations: List[int] = []

    def on_epoch_end(self, data: Any) -> None:
        self.counts.append(self.network.trace_count)
        self.configurations.append(self.network.num_traced_configurations)


def test_lenet_learns_a_synthetic_image_task_above_90_percent() -> None:
    np.random.seed(0)
    pipeline = Pipeline(train_data=NumpyDataset(make_images(3000, seed=1)),
                        eval_data=NumpyDataset(make_images(600, seed=2)), batch_size=50)
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = classifier_network(model)
    assert isinstance(network, TFNetwork)
    before = accuracy(network, pipeline)
    Estimator(pipeline=pipeline, network=network, epochs=3, log_steps=None).fit()
    after = accuracy(network, pipeline)
    assert before < 0.3
    assert after > 0.9


def test_later_epochs_add_no_traces_even_with_a_smaller_last_batch() -> None:
    def flat(count: int, seed: int) -> NumpyDataset:
        data = make_images(count, seed=seed)
        return NumpyDataset({"x": data["x"].reshape(count, -1), "y": data["y"]})

    # train batches of 32, 32, 32, 32, 2; eval batches of 32, 13
    pipeline = Pipeline(train_data=flat(130, seed=3), eval_data=flat(45, seed=4), batch_size=32)
    model = build_dense(in_dim=784, out_dim=10, activation="softmax")
    network = classifier_network(model)
    counter = TraceCounter(network)
    Estimator(pipeline=pipeline, network=network, epochs=5, traces=counter, log_steps=None).fit()
    first = counter.counts[0]
    assert first >= 1
    assert counter.counts == [first] * 5  # epochs 2..5 trace nothing
    assert counter.configurations == [counter.configurations[0]] * 5


def test_freezing_a_layer_retraces_once_and_keeps_its_weights() -> None:
    data = {"x": np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32),
            "y": np.random.default_rng(1).integers(0, 3, 64)}
    pipeline = Pipeline(train_data=NumpyDataset(data), batch_size=16)
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"),
                                                     keras.layers.Dense(3, activation="softmax")]),
                  optimizer_fn="sgd")
    network = classifier_network(model)
    Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None).fit(warmup=False)
    traces = network.trace_count
    model.layers[0].trainable = False
    frozen, trained = snapshot(model.layers[0].weights), snapshot(model.layers[1].weights)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None)
    estimator.fit(warmup=False)
    assert network.trace_count == traces + 1
    for before, after in zip(frozen, snapshot(model.layers[0].weights)):
        np.testing.assert_array_equal(before, after)
    assert not np.array_equal(trained[0], model.layers[1].weights[0].numpy())


def test_a_scheduled_optimizer_change_retraces_once_and_trains_with_the_new_optimizer() -> None:
    data = {"x": np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32),
            "y": np.random.default_rng(1).integers(0, 3, 32)}
    pipeline = Pipeline(train_data=NumpyDataset(data), batch_size=16)
    model = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")]),
                  optimizer_fn=EpochScheduler({1: "adam", 2: "sgd"}))
    network = classifier_network(model)
    adam, sgd = model.optimizer.get_current_value(1), model.optimizer.get_current_value(2)
    counter = TraceCounter(network, mode="train")
    Estimator(pipeline=pipeline, network=network, epochs=3, traces=counter, log_steps=None).fit(warmup=False)
    counts = counter.counts
    assert counts == [1, 2, 2]
    assert int(adam.iterations.numpy()) == 2 and int(sgd.iterations.numpy()) == 4


def _train_weights(eager: bool) -> Tuple[List[np.ndarray], int]:
    keras.utils.set_random_seed(7)
    data = make_images(96, seed=5)
    pipeline = Pipeline(train_data=NumpyDataset(data), eval_data=NumpyDataset(make_images(40, seed=6)),
                        batch_size=24)
    model = build(model_fn=LeNet, optimizer_fn="adam")
    network = classifier_network(model)
    Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None).fit(eager=eager)
    return snapshot(model.weights + model.current_optimizer.variables), network.trace_count


def test_static_and_eager_training_give_the_same_weights() -> None:
    static, static_traces = _train_weights(eager=False)
    eager, eager_traces = _train_weights(eager=True)
    assert static_traces > 0 and eager_traces == 0  # the eager run really ran eagerly
    assert len(static) == len(eager)
    changed = False
    for graph_value, eager_value in zip(static, eager):
        np.testing.assert_allclose(graph_value, eager_value, rtol=1e-5, atol=1e-7)
    initial = snapshot(LeNet().weights)
    for trained, fresh in zip(static, initial):
        changed |= trained.shape != fresh.shape or not np.allclose(trained, fresh)
    assert changed


@pytest.mark.parametrize("eager", [False, True])
def test_a_warmup_step_changes_no_weights_or_optimizer_state(eager: bool) -> None:
    model = build_dense(optimizer_fn="adam", activation="softmax")
    network = classifier_network(model)
    before = snapshot(model.weights + model.current_optimizer.variables)
    batch = {"x": np.ones((5, 4), np.float32), "y": np.array([0, 1, 2, 0, 1])}
    with network(mode="train", epoch=1, warmup=True, eager=eager):
        result = network.run_step(dict(batch))
    assert np.isfinite(result["ce"])
    for old, new in zip(before, snapshot(model.weights + model.current_optimizer.variables)):
        np.testing.assert_array_equal(old, new)
    with network(mode="train", epoch=1, eager=eager):
        network.run_step(dict(batch))
    assert not np.array_equal(before[0], model.weights[0].numpy())


def test_predictions_are_tensors_converted_only_when_read() -> None:
    model = build_dense(activation="softmax")
    network = classifier_network(model)
    batch: Dict[str, Any] = {"x": np.ones((3, 4), np.float32), "y": np.array([0, 1, 2])}
    with network(mode="eval", epoch=1):
        result = network.run_step(batch)
        assert isinstance(result["y_pred"], np.ndarray)
        assert result["y_pred"].shape == (3, 3)
        np.testing.assert_allclose(result["y_pred"], model(batch["x"]).numpy(), rtol=1e-6)
