"""FastEstimator's `.h5` weights files are what Keras' own `model.load_weights(path)` reads, on Keras 3 and on tf-keras
(the tf-keras2 suite runs this file): the ViT fine-tuning pattern (a BestModelSaver of a pretrained backbone, then a
new backbone calling `load_weights(path)` inside `model_fn`), and `fe.backend.save_model`'s `<name>.h5`."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import pytest
import tensorflow as tf

from fe_core.backend import load_model, save_model
from fe_core.build import build, reset_build_count
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.io import BestModelSaver
from fe_core.trace.metric import Accuracy
from fe_tf._keras import KERAS2


class ClassToken(tf.keras.layers.Layer):
    """ViT's class token: a weight of the layer itself, prepended to the sequence."""

    def build(self, input_shape: Any) -> None:
        self.token = self.add_weight(name="token", shape=(1, 1, int(input_shape[-1])), initializer="zeros")

    def call(self, x: Any) -> Any:
        return tf.concat([tf.broadcast_to(self.token, (tf.shape(x)[0], 1, self.token.shape[-1])), x], axis=1)


def encoder() -> Any:
    inputs = tf.keras.Input((4, 3))
    x = tf.keras.layers.Dense(6)(inputs)
    x = ClassToken()(x)
    return tf.keras.Model(inputs, tf.keras.layers.LayerNormalization()(x[:, 0, :]))


def vision_model(weights_path: Optional[str] = None) -> Tuple[Any, Any]:
    """(backbone, classifier) as FastEstimator's ViT builds them, loading the backbone with Keras' load_weights."""
    backbone = encoder()
    if weights_path:
        backbone.load_weights(weights_path)
    inputs = tf.keras.Input((4, 3))
    return backbone, tf.keras.Model(inputs, tf.keras.layers.Dense(2, activation="softmax")(backbone(inputs)))


@pytest.fixture(autouse=True)
def fresh_names() -> None:
    reset_build_count()


def test_a_best_model_saver_file_of_a_backbone_loads_with_keras_load_weights(tmp_path: Any) -> None:
    backbone, classifier = build(model_fn=vision_model, optimizer_fn=[None, "adam"])
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 4, 3)).astype(np.float32), rng.integers(0, 2, size=(16, )).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x, "y": y}),
                        batch_size=8)
    network = make_network([ModelOp(model=classifier, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=classifier, loss_name="ce")])
    saver = BestModelSaver(model=backbone, save_dir=str(tmp_path), metric="accuracy", save_best_mode="max")
    Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=None,
              traces=[Accuracy(true_key="y", pred_key="y_pred"), saver]).fit(warmup=False)
    assert saver.model_path is not None and saver.model_path.endswith(".h5")
    assert float(np.abs(backbone.layers[2].get_weights()[0]).sum()) > 0  # the class token was trained
    loaded, _ = build(model_fn=lambda: vision_model(weights_path=saver.model_path), optimizer_fn=[None, "adam"])
    for trained, read in zip(backbone.get_weights(), loaded.get_weights(), strict=True):
        np.testing.assert_array_equal(read, trained)


def test_backend_save_model_writes_what_keras_load_weights_and_load_model_read(tmp_path: Any) -> None:
    model = build(model_fn=encoder, optimizer_fn="adam", model_name="encoder")
    model.layers[2].token.assign(np.full((1, 1, 6), 0.5, dtype=np.float32))
    path = save_model(model, str(tmp_path), model_name="encoder", save_optimizer=True)
    assert path.endswith("encoder.h5") and sorted(p.name for p in tmp_path.iterdir()) == ["encoder.h5",
                                                                                         "encoder_opt.npz"]
    fresh = encoder()
    fresh.load_weights(path)  # Keras' own reader, as FastEstimator users call it
    assert all(np.array_equal(a, b) for a, b in zip(fresh.get_weights(), model.get_weights(), strict=True))
    rebuilt = build(model_fn=encoder, optimizer_fn="adam", model_name="rebuilt")
    load_model(rebuilt, path, load_optimizer=True)  # and fe's
    np.testing.assert_array_equal(rebuilt.layers[2].token.numpy(), np.full((1, 1, 6), 0.5))


@pytest.mark.keras2
def test_keras2_class_token_as_a_plain_tf_variable_round_trips(tmp_path: Any) -> None:
    """FastEstimator's ViT keeps its class token as a `tf.Variable` attribute, which tf-keras tracks as a weight."""
    assert KERAS2

    class VariableToken(tf.keras.layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.token = tf.Variable(tf.zeros((1, 1, 3)), trainable=True, name="cls_token")

        def call(self, x: Any) -> Any:
            return tf.concat([tf.broadcast_to(self.token, (tf.shape(x)[0], 1, 3)), x], axis=1)

    def model_fn() -> Any:
        inputs = tf.keras.Input((4, 3))
        return tf.keras.Model(inputs, VariableToken()(inputs)[:, 0, :])

    model = build(model_fn=model_fn, optimizer_fn="adam", model_name="token")
    model.layers[1].token.assign(tf.fill((1, 1, 3), 2.0))
    path = save_model(model, str(tmp_path), model_name="token")
    fresh = model_fn()
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh.layers[1].token.numpy(), np.full((1, 1, 3), 2.0))
