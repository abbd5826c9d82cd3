"""Patterns of FastEstimator's application scripts that fe must run on TensorFlow (small equivalents written for fe):
models that get their weights on their first call (IMDB's Sequential without Input), user ops that need a concrete
batch size (CVAE's sampling), and `fe.backend.feed_forward` called per batch by a trace (siamese one-shot accuracy)."""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

import fe_core.backend as fb
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_tf.backend import models as tf_models

MIRRORED_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apphub_mirrored_check.py")


def _text_data(n: int = 16) -> NumpyDataset:
    rng = np.random.default_rng(0)
    return NumpyDataset({"x": rng.integers(0, 20, (n, 6)), "y": rng.integers(0, 2, (n, 1)).astype(np.float32)})


def _no_input_sequential() -> keras.Model:
    return keras.Sequential([keras.layers.Embedding(20, 4), keras.layers.GlobalAveragePooling1D(),
                             keras.layers.Dense(1, activation="sigmoid")])


class Subclassed(keras.Model):
    def __init__(self) -> None:
        super().__init__()
        self.embed = keras.layers.Embedding(20, 4)
        self.pool = keras.layers.GlobalAveragePooling1D()
        self.head = keras.layers.Dense(1, activation="sigmoid")

    def call(self, x: Any, training: bool = False) -> Any:
        return self.head(self.pool(self.embed(x)))


def _classifier(model: Any) -> List[Any]:
    return [ModelOp(model=model, inputs="x", outputs="y_pred"), CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
            UpdateOp(model=model, loss_name="ce")]


# ------------------------------------------------------------------ models without weights at fe.build (IMDB)
@pytest.mark.parametrize("model_fn", [_no_input_sequential, Subclassed])
@pytest.mark.parametrize("warmup", [True, False])
def test_a_model_without_weights_at_build_trains_with_a_named_optimizer(model_fn: Any, warmup: bool) -> None:
    model = build(model_fn, "adam")
    assert not model.built
    estimator = Estimator(Pipeline(train_data=_text_data(), eval_data=_text_data(), batch_size=4),
                          make_network(_classifier(model)), epochs=2, log_steps=None, train_steps_per_epoch=2)
    estimator.fit(warmup=warmup)
    assert model.built and int(model.optimizer.iterations.numpy()) == 4
    assert len(model.optimizer.variables) > 2  # moments for every weight


def test_an_optimizer_left_unbuilt_is_built_before_its_saved_state_loads(tmp_path: Any) -> None:
    trained = build(_no_input_sequential, "adam", model_name="imdb")
    Estimator(Pipeline(train_data=_text_data(), batch_size=4), make_network(_classifier(trained)), epochs=1,
              log_steps=None).fit()
    fb.save_model(trained, str(tmp_path), save_optimizer=True)
    fresh = build(_no_input_sequential, "adam", model_name="imdb")
    fresh(np.zeros((1, 6), dtype=np.int64))  # weights now exist, the optimizer state does not
    assert not fresh.optimizer.built
    fb.load_model(fresh, os.path.join(str(tmp_path), "imdb.weights.h5"), load_optimizer=True)
    assert int(fresh.optimizer.iterations.numpy()) == 4
    for mine, theirs in zip(fresh.optimizer.variables, trained.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))


def test_a_model_without_weights_at_build_resumes_from_a_restore_wizard_checkpoint(tmp_path: Any) -> None:
    from fe_core.build import reset_build_count
    from fe_core.trace.io.restore_wizard import RestoreWizard

    def run(epochs: int) -> Any:
        reset_build_count()  # the same model name in both runs, as in two runs of a script
        model = build(_no_input_sequential, "adam")
        Estimator(Pipeline(train_data=_text_data(), batch_size=4), make_network(_classifier(model)), epochs=epochs,
                  log_steps=None, traces=[RestoreWizard(str(tmp_path))]).fit()
        return model

    first = run(1)
    resumed = run(2)  # restores epoch 1 (weights and optimizer state) and trains epoch 2
    assert int(first.optimizer.iterations.numpy()) == 4 and int(resumed.optimizer.iterations.numpy()) == 8


@pytest.mark.slow  # a fresh interpreter with two logical CPUs
def test_a_model_without_weights_trains_under_a_mirrored_strategy() -> None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    completed = subprocess.run([sys.executable, MIRRORED_CHECK], capture_output=True, text=True, env=env, timeout=600)
    assert completed.returncode == 0 and "ALL OK" in completed.stdout, completed.stdout[-2000:] + completed.stderr[-3000:]


# ------------------------------------------------------------------ user ops needing the batch size (CVAE)
class Reparameterize(TensorOp):
    """z = mean + noise of mean's (static) shape, as a VAE's sampling op is often written."""

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return data + tf.random.normal(shape=data.shape)


def test_a_user_op_reading_the_static_batch_size_runs_in_the_traced_step() -> None:
    model = build(lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), "adam")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x": rng.random((18, 3)).astype(np.float32), "y": rng.random((18, 2)).astype(np.float32)})
    network = make_network([ModelOp(model=model, inputs="x", outputs="mean"),
                            Reparameterize(inputs="mean", outputs="z"),
                            MeanSquaredError(inputs=("z", "y"), outputs="mse"), UpdateOp(model=model, loss_name="mse")])
    estimator = Estimator(Pipeline(train_data=data, eval_data=data, batch_size=4), network, epochs=1, log_steps=None)
    estimator.fit()  # 4 full batches and one of 2, in train and eval
    traces = network.trace_count
    estimator.fit(warmup=False)  # the same shapes again: nothing is traced anew
    assert network.trace_count == traces
    assert int(model.optimizer.iterations.numpy()) == 10


def test_ordinary_ops_still_trace_once_per_configuration_with_a_smaller_last_batch() -> None:
    model = build(lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), "adam")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x": rng.random((18, 3)).astype(np.float32), "y": rng.random((18, 2)).astype(np.float32)})
    network = make_network([ModelOp(model=model, inputs="x", outputs="mean"),
                            MeanSquaredError(inputs=("mean", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    Estimator(Pipeline(train_data=data, eval_data=data, batch_size=4), network, epochs=1, log_steps=None).fit()
    assert network.trace_count == 2  # train and eval, each once (the warmup steps run eagerly)


# ------------------------------------------------------------------ feed_forward per batch (siamese one-shot trace)
def _pair_model() -> keras.Model:
    a, b = keras.Input((5,)), keras.Input((5,))
    branch = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dropout(0.5)])
    merged = keras.layers.Subtract()([branch(a), branch(b)])
    return keras.Model([a, b], keras.layers.Dense(1, activation="sigmoid")(merged))


def test_feed_forward_called_eagerly_matches_the_model_and_traces_a_bounded_number_of_times() -> None:
    model = build(_pair_model, "adam")
    rng = np.random.default_rng(0)
    for size in (20, 20, 7, 20, 13, 3, 20):
        pair = [rng.random((size, 5)).astype(np.float32), rng.random((size, 5)).astype(np.float32)]
        result = fb.feed_forward(model, pair, training=False)
        np.testing.assert_allclose(result.numpy(), model(pair, training=False).numpy(), rtol=1e-5, atol=1e-6)
    traced = tf_models._FORWARDS[id(model)][1]  # pylint: disable=protected-access
    assert traced.experimental_get_tracing_count() <= 2


def test_feed_forward_keeps_gradients_and_training_behaviour() -> None:
    model = build(_pair_model, "adam")
    rng = np.random.default_rng(1)
    pair = [tf.constant(rng.normal(size=(4, 5)), tf.float32), tf.constant(rng.normal(size=(4, 5)), tf.float32)]
    with tf.GradientTape() as tape:
        out = fb.feed_forward(model, pair, training=False)
    gradients = tape.gradient(out, model.trainable_variables)
    assert all(gradient is not None for gradient in gradients)
    train_outputs = {tuple(np.round(fb.feed_forward(model, pair, training=True).numpy().ravel(), 6))
                     for _ in range(6)}
    assert len(train_outputs) > 1  # dropout is active in training mode
    inside = tf.function(lambda p: fb.feed_forward(model, p, training=False))(pair)
    np.testing.assert_allclose(inside.numpy(), out.numpy(), rtol=1e-6)


def test_feed_forward_runs_a_model_that_cannot_be_traced_eagerly() -> None:
    class NeedsNumpy(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, x: Any, training: bool = False) -> Any:
            return self.dense(x) + float(np.asarray(x).sum() > 0)  # reads values in Python: eager only

    model = build(NeedsNumpy, "adam")
    x = np.ones((3, 2), dtype=np.float32)
    model(x)
    expected = model(x).numpy()
    np.testing.assert_allclose(fb.feed_forward(model, x, training=False).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(fb.feed_forward(model, x, training=False).numpy(), expected, rtol=1e-6)


def test_feed_forward_builds_an_unbuilt_model_eagerly() -> None:
    model = build(_no_input_sequential, None)
    out = fb.feed_forward(model, np.zeros((2, 6), dtype=np.int64), training=False)
    assert model.built and tuple(out.shape) == (2, 1)


# ------------------------------------------------------------------ keys a later Delete removes (line search)
def test_a_pipeline_key_deleted_after_use_or_unused_does_not_break_warmup() -> None:
    from fe_core.op.numpyop import Delete, LambdaOp
    model = build(lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), "adam")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x": rng.random((8, 3)).astype(np.float32), "y": rng.random((8, 2)).astype(np.float32),
                         "mask_left": rng.random((8, 4)), "keypoint": rng.random((8, 2))})
    pipeline = Pipeline(train_data=data, eval_data=data, batch_size=4,
                        ops=[LambdaOp(fn=lambda mask: mask.sum(axis=-1), inputs="mask_left", outputs="area"),
                             Delete(["mask_left", "keypoint", "area"])])
    network = make_network([ModelOp(model=model, inputs="x", outputs="p"),
                            MeanSquaredError(inputs=("p", "y"), outputs="mse"), UpdateOp(model=model, loss_name="mse")])
    Estimator(pipeline, network, epochs=1, log_steps=None).fit()
    assert int(model.optimizer.iterations.numpy()) == 2
