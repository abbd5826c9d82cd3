"""Mixed precision training with the `mixed_float16` policy and loss scaling."""
from __future__ import annotations

import os

import keras
import numpy as np
import pytest

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from tf_testing import classifier_network, snapshot


def _model_fn() -> keras.Model:
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3),
                             keras.layers.Activation("softmax", dtype="float32")])


def _data(count: int, seed: int) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, count)
    x = rng.normal(size=(count, 8)).astype(np.float32)
    x[np.arange(count), y] += 2.0
    return NumpyDataset({"x": x, "y": y})


class LossRecorder(Trace):
    def __init__(self) -> None:
        super().__init__(inputs="ce", mode="train")
        self.losses = []

    def on_batch_end(self, data) -> None:
        self.losses.append(float(data["ce"]))


@pytest.mark.keras3  # Keras 3's LossScaleOptimizer names (dynamic_scale, variable.path)
def test_mixed_precision_trains_with_a_loss_scaled_optimizer(tmp_path: "os.PathLike[str]") -> None:
    model = build(model_fn=_model_fn, optimizer_fn=lambda: keras.optimizers.Adam(0.01), mixed_precision=True)
    assert model.layers[0].compute_dtype == "float16" and model.layers[0].kernel.dtype == "float32"
    assert isinstance(model.current_optimizer, keras.mixed_precision.LossScaleOptimizer)
    network = classifier_network(model)
    assert network.mixed_precision
    recorder = LossRecorder()
    pipeline = Pipeline(train_data=_data(512, seed=0), eval_data=_data(128, seed=1), batch_size=32)
    Estimator(pipeline=pipeline, network=network, epochs=3, traces=recorder, log_steps=None).fit()
    assert np.all(np.isfinite(recorder.losses))
    assert np.mean(recorder.losses[-8:]) < 0.5 * np.mean(recorder.losses[:8])
    prediction = network.transform({"x": np.ones((2, 8), np.float32), "y": np.zeros(2, np.int64)}, mode="eval")
    assert prediction["y_pred"].dtype == np.float32
    # the loss-scale state is part of the saved optimizer state
    backend = get_backend("tf")
    backend.save_model(model, str(tmp_path), save_optimizer=True)
    saved = snapshot(model.current_optimizer.variables)
    model.current_optimizer.dynamic_scale.assign(1.0)
    backend.load_model(model, str(tmp_path), load_optimizer=True)
    assert float(model.current_optimizer.dynamic_scale.numpy()) == float(saved[[
        v.path for v in model.current_optimizer.variables].index(model.current_optimizer.dynamic_scale.path)])


def test_mixed_precision_gradient_accumulation_updates_every_n_steps() -> None:
    model = build(model_fn=_model_fn, optimizer_fn="sgd", mixed_precision=True)
    network = classifier_network(model, merge_grad=2)
    rng = np.random.default_rng(0)
    batches = [{"x": rng.normal(size=(4, 8)).astype(np.float32), "y": rng.integers(0, 3, 4)} for _ in range(4)]
    moved = []
    with network(mode="train", epoch=1):
        for batch in batches:
            before = snapshot(model.trainable_variables)
            network.run_step(dict(batch))
            moved.append(not np.array_equal(before[0], model.trainable_variables[0].numpy()))
    assert moved == [False, True, False, True]
