"""Keras 2 model code trained through fe on tf-keras (TF_USE_LEGACY_KERAS=1): the idioms Keras 3 rejects.

Run by the tf-keras2 suite (`python tools/test.py tf-keras2`); every test here is marked keras2, which the Keras 3
suites deselect. The models are written the way FastEstimator 1.x applications wrote them, with `tf.keras`.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest
import tensorflow as tf

from fe_core.backend import get_lr, load_model, save_model, set_lr
from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import RestoreWizard
from fe_tf._keras import KERAS2, keras

pytestmark = pytest.mark.keras2


def test_fe_tf_runs_on_tf_keras() -> None:
    assert KERAS2 and keras.__name__ == "tf_keras"
    assert tf.keras.Model is keras.Model


# ---------------------------------------------------------------------------------------------------- models
VOCAB, LENGTH, BATCH = 12, 6, 4


def embedding_model() -> Any:
    """PTB-style: an Embedding with a fixed batch (`batch_input_shape`)."""
    return tf.keras.Sequential([tf.keras.layers.Embedding(VOCAB, 8, batch_input_shape=(BATCH, LENGTH)),
                                tf.keras.layers.GlobalAveragePooling1D(),
                                tf.keras.layers.Dense(3, activation="softmax")])


def reshape_model() -> Any:
    """PyramidNet/YOLO-style: TensorFlow functions applied to a functional model's symbolic tensors."""
    inputs = tf.keras.Input((4, 4))
    flat = tf.reshape(inputs, (-1, 16))
    hidden = tf.keras.layers.Dense(8, activation="relu")(flat)
    return tf.keras.Model(inputs, tf.nn.softmax(tf.keras.layers.Dense(3)(hidden)))


class ShapedDense(tf.keras.layers.Layer):
    """LoRA/PGGAN-style: `add_weight(shape=<int>)` and `Variable.get_shape()`."""

    def build(self, input_shape: Any) -> None:
        self.kernel = self.add_weight(name="kernel", shape=(int(input_shape[-1]), 3), initializer="glorot_uniform")
        self.bias = self.add_weight(name="bias", shape=3, initializer="zeros")

    def call(self, x: Any, training: Any = None) -> Any:
        rows, columns = self.kernel.get_shape()
        return tf.nn.softmax(tf.matmul(x, tf.reshape(self.kernel, (rows, columns))) + self.bias)


def get_shape_model() -> Any:
    """ViT-style: a Python bool passed positionally to a layer's call, on top of ShapedDense."""
    inputs = tf.keras.Input((16,))
    return tf.keras.Model(inputs, ShapedDense()(inputs, True))


class TrainingBlock(tf.keras.layers.Layer):
    """LeViT-style: a layer whose `call` takes two positional arguments (the input and `training`)."""

    def __init__(self, units: int, activation: Optional[str] = None) -> None:
        super().__init__()
        self.dense = tf.keras.layers.Dense(units, activation=activation)

    def call(self, x: Any, training: Any) -> Any:
        return self.dense(x)


def two_argument_sequential() -> Any:
    return tf.keras.Sequential([tf.keras.Input((16,)), TrainingBlock(8, "relu"), TrainingBlock(3, "softmax")])


def tokens(count: int, seed: int) -> Dict[str, np.ndarray]:
    """Token rows whose class is the token most frequent among 0, 1, 2."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, count)
    x = rng.integers(3, VOCAB, (count, LENGTH))
    x[:, :3] = labels[:, None]
    return {"x": x.astype(np.int64), "y": labels.astype(np.int64)}


def features(count: int, seed: int, shape: tuple) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, 16)).astype(np.float32)
    y = x[:, :3].argmax(axis=1).astype(np.int64)
    return {"x": x.reshape((count,) + shape), "y": y}


def mean_ce(model: Any, data: Dict[str, np.ndarray]) -> float:
    probs = np.concatenate([model(data["x"][i:i + BATCH], training=False).numpy()
                            for i in range(0, len(data["y"]), BATCH)])
    return float(-np.mean(np.log(probs[np.arange(len(data["y"])), data["y"]] + 1e-7)))


def fit(model: Any, data: Dict[str, np.ndarray], epochs: int = 3, traces: Optional[List[Trace]] = None) -> None:
    pipeline = Pipeline(train_data=NumpyDataset(data), eval_data=NumpyDataset(data), batch_size=BATCH)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce")])
    Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=None).fit()


# ---------------------------------------------------------------------------------------------------- training
@pytest.mark.parametrize("model_fn, data", [
    (embedding_model, tokens(32, seed=0)),
    (reshape_model, features(32, seed=1, shape=(4, 4))),
    (get_shape_model, features(32, seed=2, shape=(16,))),
    (two_argument_sequential, features(32, seed=9, shape=(16,))),
], ids=["batch_input_shape", "tf_reshape_on_symbolic_tensor", "get_shape_add_weight_int_positional_bool",
        "sequential_of_two_argument_layers"])
@pytest.mark.parametrize("optimizer_fn", ["adam", lambda: tf.keras.optimizers.legacy.Adam(0.01)],
                         ids=["adam", "legacy_adam"])
def test_keras2_model_code_trains_through_fe(model_fn: Callable[[], Any], data: Dict[str, np.ndarray],
                                             optimizer_fn: Any) -> None:
    model = build(model_fn=model_fn, optimizer_fn=optimizer_fn)
    before = mean_ce(model, data)
    fit(model, data, epochs=4)
    assert mean_ce(model, data) < before - 0.02


@pytest.mark.parametrize("optimizer_fn", [lambda: tf.keras.optimizers.legacy.SGD(0.1), "sgd"], ids=["legacy", "sgd"])
def test_mixed_precision_with_tf_keras_optimizers(optimizer_fn: Any) -> None:
    data = features(32, seed=3, shape=(4, 4))
    model = build(model_fn=reshape_model, optimizer_fn=optimizer_fn, mixed_precision=True)
    assert model.layers[-1].compute_dtype == "float16" or model.layers[2].compute_dtype == "float16"
    assert isinstance(model.current_optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    before = mean_ce(model, data)
    fit(model, data, epochs=4)
    assert mean_ce(model, data) < before - 0.05
    assert tf.keras.mixed_precision.global_policy().name == "float32"  # the policy is fe's only while building


def test_optimizer_names_give_tf_keras_optimizers() -> None:
    model = build(model_fn=reshape_model, optimizer_fn="rmsprop")
    assert isinstance(model.current_optimizer, tf.keras.optimizers.RMSprop)
    assert get_lr(model) == 0.001


# ---------------------------------------------------------------------------------------------------- learning rate
class SetLR(Trace):
    def __init__(self, model: Any, value: float) -> None:
        super().__init__(mode="train")
        self.model, self.value = model, value
        self.seen: List[float] = []

    def on_epoch_begin(self, data: Any) -> None:
        if self.system.epoch_idx == 3:
            set_lr(self.model, self.value)
        self.seen.append(get_lr(self.model))


@pytest.mark.parametrize("optimizer_fn", [lambda: tf.keras.optimizers.legacy.SGD(0.05),
                                          lambda: tf.keras.optimizers.SGD(0.05)], ids=["legacy", "current"])
def test_learning_rate_get_and_set_reach_the_traced_step(optimizer_fn: Any) -> None:
    data = features(16, seed=4, shape=(16,))
    model = build(model_fn=get_shape_model, optimizer_fn=optimizer_fn)
    trace = SetLR(model, 0.0)
    initial = [np.array(v.numpy()) for v in model.trainable_variables]
    weights: List[List[np.ndarray]] = []

    class Snapshot(Trace):
        def on_epoch_end(self, data: Any) -> None:
            weights.append([np.array(v.numpy()) for v in model.trainable_variables])

    fit(model, data, epochs=3, traces=[trace, Snapshot(mode="train")])
    assert trace.seen == [0.05, 0.05, 0.0]
    assert not np.array_equal(weights[1][0], initial[0])  # epochs 1 and 2 trained
    for got, want in zip(weights[2], weights[1]):  # epoch 3 ran with learning rate 0: nothing moved
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------------- save / load
def test_save_and_load_weights_optimizer_and_whole_model(tmp_path: Any) -> None:
    data = features(16, seed=5, shape=(16,))
    model = build(model_fn=get_shape_model, optimizer_fn=lambda: tf.keras.optimizers.legacy.Adam(0.01))
    fit(model, data, epochs=1)
    path = save_model(model, str(tmp_path), "lora", save_optimizer=True, save_architecture=True)
    assert sorted(os.listdir(tmp_path)) == ["lora.h5", "lora.keras", "lora_opt.npz"]  # FastEstimator's weights name
    other = build(model_fn=get_shape_model, optimizer_fn=lambda: tf.keras.optimizers.legacy.Adam(0.01))
    load_model(other, path, load_optimizer=True)
    for got, want in zip(other.weights, model.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(other.current_optimizer.variables(), model.current_optimizer.variables()):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    whole = tf.keras.models.load_model(str(tmp_path / "lora.keras"), custom_objects={"ShapedDense": ShapedDense})
    np.testing.assert_allclose(whole(data["x"]).numpy(), model(data["x"]).numpy(), rtol=1e-6)


def test_keras2_h5_weights_load_through_build_and_load_model(tmp_path: Any) -> None:
    """FastEstimator 1.x wrote `<name>.h5` with Keras 2's `save_weights` (HDF5): fe reads it under tf-keras."""
    data = features(8, seed=6, shape=(4, 4))
    trained = build(model_fn=reshape_model, optimizer_fn="adam")
    fit(trained, data, epochs=1)
    legacy_h5 = str(tmp_path / "model.h5")
    trained.save_weights(legacy_h5)
    loaded = build(model_fn=reshape_model, optimizer_fn="adam", weights_path=legacy_h5)
    np.testing.assert_array_equal(loaded(data["x"]).numpy(), trained(data["x"]).numpy())
    again = build(model_fn=reshape_model, optimizer_fn="adam")
    load_model(again, legacy_h5)
    np.testing.assert_array_equal(again(data["x"]).numpy(), trained(data["x"]).numpy())


# ---------------------------------------------------------------------------------------------------- resume
class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def get_state(self) -> Dict[str, Any]:
        return {}

    def on_batch_end(self, data: Any) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")


def resumable_run(directory: Optional[str], optimizer_fn: Callable[[], Any], kill_at: Optional[int] = None
                  ) -> List[np.ndarray]:
    """A user's script from the top: seed, data, a Keras 2 model, fit with RestoreWizard."""
    reset_build_count()
    tf.keras.utils.set_random_seed(3)
    data = tokens(32, seed=7)
    model = build(model_fn=embedding_model, optimizer_fn=optimizer_fn, model_name="ptb")
    traces: List[Trace] = [KillAt(kill_at)] + ([RestoreWizard(directory, frequency="3s")] if directory else [])
    fit(model, data, epochs=3, traces=traces)
    optimizer = model.current_optimizer
    variables = optimizer.variables() if callable(optimizer.variables) else optimizer.variables
    return [v.numpy() for v in model.weights] + [v.numpy() for v in variables]


@pytest.mark.parametrize("optimizer_fn", [lambda: tf.keras.optimizers.legacy.Adam(0.01),
                                          lambda: tf.keras.optimizers.Adam(0.01)], ids=["legacy", "current"])
def test_killed_tf_keras_run_resumes_bitwise(tmp_path: Any, optimizer_fn: Callable[[], Any]) -> None:
    reference = resumable_run(None, optimizer_fn)
    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        resumable_run(directory, optimizer_fn, kill_at=13)
    resumed = resumable_run(directory, optimizer_fn)
    assert len(resumed) == len(reference)
    for got, want in zip(resumed, reference):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("optimizer_fn", [lambda: tf.keras.optimizers.legacy.Adam(0.01), "adam"],
                         ids=["legacy", "current"])
def test_loss_scale_state_is_saved_and_restored(tmp_path: Any, optimizer_fn: Any) -> None:
    data = features(16, seed=8, shape=(4, 4))
    model = build(model_fn=reshape_model, optimizer_fn=optimizer_fn, mixed_precision=True)
    fit(model, data, epochs=1)
    optimizer = model.current_optimizer
    # the state training leaves depends on whether the last step overflowed (which resets the good-step count): set
    # a known state the fresh optimizer never has, so the check does not hang on the batch order
    optimizer.dynamic_counter.assign(7)
    optimizer._loss_scale._current_loss_scale.assign(512.0)  # pylint: disable=protected-access
    path = save_model(model, str(tmp_path), "mp", save_optimizer=True)
    scale, good_steps = float(optimizer.loss_scale.numpy()), int(optimizer.dynamic_counter.numpy())
    assert (good_steps, scale) == (7, 512.0)
    optimizer.dynamic_counter.assign(0)
    optimizer._loss_scale._current_loss_scale.assign(1.0)  # pylint: disable=protected-access
    load_model(model, path, load_optimizer=True)
    assert float(optimizer.loss_scale.numpy()) == scale and int(optimizer.dynamic_counter.numpy()) == good_steps


def test_slicer_tutorial_shape_trains_with_a_legacy_optimizer() -> None:
    """FastEstimator's slicer tutorial: a 2D model fed a volume slice by slice (AxisSlicer, predictions and loss
    averaged back by MeanUnslicer), built with `tf.keras.optimizers.legacy.Adam`, runs on tf-keras."""
    from fe_core.slicer import AxisSlicer, MeanUnslicer  # pylint: disable=import-outside-toplevel
    from fe_core.trace.metric import Accuracy  # pylint: disable=import-outside-toplevel

    flat = features(16, seed=10, shape=(4, 4))
    data = {"x": np.repeat(flat["x"][..., None], 3, axis=-1), "y": flat["y"]}  # (16, 4, 4, 3): 3 slices of (4, 4)
    model = build(model_fn=reshape_model, optimizer_fn=lambda: tf.keras.optimizers.legacy.Adam(0.01))
    assert isinstance(model.current_optimizer, tf.keras.optimizers.legacy.Adam)
    before = mean_ce(model, flat)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce")],
                           slicers=[AxisSlicer(slice="x", unslice=None, axis=-1),
                                    MeanUnslicer(unslice=("y_pred", "ce"))])
    pipeline = Pipeline(train_data=NumpyDataset(data), eval_data=NumpyDataset(data), batch_size=BATCH)
    summary = Estimator(pipeline=pipeline, network=network, epochs=3, log_steps=0,
                        traces=[Accuracy(true_key="y", pred_key="y_pred")]).fit("slicer")
    assert mean_ce(model, flat) < before - 0.02
    assert len(summary.history["eval"]["accuracy"]) == 3  # the unsliced predictions (16 rows, 3 classes) reached the metric
