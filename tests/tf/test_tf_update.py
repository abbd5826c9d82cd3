"""UpdateOp on TensorFlow: gradient accumulation, regularization losses, deferred updates, given gradients."""
from __future__ import annotations

from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from tf_testing import dense_model, snapshot

LR = 0.1


def _batches(count: int) -> List[Dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    return [{"x": rng.normal(size=(6, 4)).astype(np.float32), "y": rng.normal(size=(6, 3)).astype(np.float32)}
            for _ in range(count)]


def _mse_gradients(model: keras.Model, batch: Dict[str, np.ndarray]) -> List[np.ndarray]:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.reduce_mean(tf.square(model(batch["x"]) - batch["y"]), axis=1))
    return [gradient.numpy() for gradient in tape.gradient(loss, model.trainable_variables)]


def _regression_network(model: Any, **update_kwargs: Any) -> Any:
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                             UpdateOp(model=model, loss_name="mse", **update_kwargs)])


@pytest.mark.parametrize("eager", [False, True])
def test_merge_grad_moves_weights_by_minus_lr_times_the_mean_gradient_every_n_steps(eager: bool) -> None:
    merge = 3
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = _regression_network(model, merge_grad=merge)
    batches = _batches(2 * merge)
    with network(mode="train", epoch=1, eager=eager):
        for start in (0, merge):
            weights = snapshot(model.trainable_variables)
            gradients = [_mse_gradients(model, batch) for batch in batches[start:start + merge]]
            for step in range(merge):
                network.run_step(dict(batches[start + step]))
                if step < merge - 1:  # accumulating: nothing moves
                    for before, now in zip(weights, snapshot(model.trainable_variables)):
                        np.testing.assert_array_equal(before, now)
            for index, (before, now) in enumerate(zip(weights, snapshot(model.trainable_variables))):
                mean_gradient = np.mean([step_gradients[index] for step_gradients in gradients], axis=0)
                np.testing.assert_allclose(now - before, -LR * mean_gradient, rtol=1e-5, atol=1e-7)
    assert int(model.current_optimizer.iterations.numpy()) == 2


def test_merge_grad_keeps_its_count_across_epochs_without_new_traces() -> None:
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = _regression_network(model, merge_grad=2)
    batches = _batches(3)
    with network(mode="train", epoch=1):
        for batch in batches:
            network.run_step(dict(batch))
    traces = network.trace_count
    with network(mode="train", epoch=2):
        weights = snapshot(model.trainable_variables)
        network.run_step(dict(batches[0]))  # the 4th step completes the second group of 2
    assert network.trace_count == traces == 2  # one trace per phase: accumulate, apply
    assert int(model.current_optimizer.iterations.numpy()) == 2
    assert not np.array_equal(weights[0], model.trainable_variables[0].numpy())


def test_regularization_losses_of_the_model_are_added_to_its_loss() -> None:
    l2 = 0.5
    model = build(model_fn=lambda: dense_model(kernel_regularizer=keras.regularizers.L2(l2)),
                  optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = _regression_network(model)
    batch = _batches(1)[0]
    kernel_before, bias_before = snapshot(model.trainable_variables)
    kernel_gradient, bias_gradient = _mse_gradients(model, batch)
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
    kernel_after, bias_after = snapshot(model.trainable_variables)
    np.testing.assert_allclose(kernel_after - kernel_before, -LR * (kernel_gradient + 2 * l2 * kernel_before),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(bias_after - bias_before, -LR * bias_gradient, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("defer", [True, False])
def test_a_deferred_update_runs_after_the_later_ops(defer: bool) -> None:
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                                UpdateOp(model=model, loss_name="mse", defer=defer),
                                ModelOp(model=model, inputs="x", outputs="y_again")])
    batch = _batches(1)[0]
    with network(mode="train", epoch=1):
        result = network.run_step(dict(batch))
    same = np.allclose(result["y_pred"], result["y_again"])
    assert same is defer  # deferred: the second call still saw the old weights


class GradientOp(TensorOp):
    """Computes the gradients of a loss with respect to a model's variables, using the step's tape."""

    def __init__(self, model: Any, loss: str, outputs: str) -> None:
        super().__init__(inputs=loss, outputs=outputs, mode="train")
        self.model = model

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return state["tape"].gradient(data, self.model.trainable_variables)

    def fe_retain_graph(self, retain: Any = None) -> Any:  # computes gradients: the tape must be kept
        return True


def test_update_with_given_gradients_applies_them() -> None:
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                                GradientOp(model=model, loss="mse", outputs="grads"),
                                UpdateOp(model=model, gradients="grads")])
    batch = _batches(1)[0]
    before = snapshot(model.trainable_variables)
    gradients = _mse_gradients(model, batch)
    with network(mode="train", epoch=1):
        network.run_step(dict(batch))
    for old, new, gradient in zip(before, snapshot(model.trainable_variables), gradients):
        np.testing.assert_allclose(new - old, -LR * gradient, rtol=1e-5, atol=1e-7)


def test_updating_a_model_without_optimizer_names_the_model() -> None:
    model = build(model_fn=dense_model, optimizer_fn=None, model_name="frozen")
    network = _regression_network(model)
    with network(mode="train", epoch=1):
        with pytest.raises(ValueError, match="'frozen'.*no optimizer"):
            network.run_step(dict(_batches(1)[0]))


def test_the_accumulation_state_of_an_update_op_round_trips_as_plain_data() -> None:
    backend = get_backend("tf")
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = _regression_network(model, merge_grad=3)
    update = network.ops[-1]
    assert backend.get_update_state(update) == {}
    batches = _batches(3)
    with network(mode="train", epoch=1):
        for batch in batches[:2]:
            network.run_step(dict(batch))
    saved = backend.get_update_state(update)
    saved_weights = model.get_weights()
    assert saved["count"] == 2 and all(isinstance(value, np.ndarray) for value in saved["accumulators"])
    with network(mode="train", epoch=1):
        network.run_step(dict(batches[2]))  # completes the group of 3
    uninterrupted = snapshot(model.trainable_variables)
    # a fresh model and op resuming from the saved state make the same update on the third batch
    resumed_model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    resumed_model.set_weights(saved_weights)
    resumed = _regression_network(resumed_model, merge_grad=3)
    backend.set_update_state(resumed.ops[-1], saved)
    with resumed(mode="train", epoch=1):
        resumed.run_step(dict(batches[2]))
    for expected, value in zip(uninterrupted, snapshot(resumed_model.trainable_variables)):
        np.testing.assert_allclose(value, expected, rtol=1e-6, atol=1e-7)
    assert backend.get_update_state(resumed.ops[-1])["count"] == 3
