"""Explanations of Keras models: SaliencyNet masks and the Saliency trace (channels last)."""
from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.data import Data
from fe_core.summary.system import System
from fe_core.trace.xai import Saliency
from fe_core.xai import SaliencyNet


def _top_left_model():
    """Class 0's score is the sum of the top-left 4x4 pixels of channel 0; class 1's a constant."""
    inputs = keras.Input((16, 16, 3))
    dense = keras.layers.Dense(2)
    outputs = dense(keras.layers.Flatten()(inputs))
    model = keras.Model(inputs, outputs)
    weight = np.zeros((16, 16, 3, 2), dtype=np.float32)
    weight[:4, :4, 0, 0] = 1.0
    dense.set_weights([weight.reshape(-1, 2), np.array([0.0, 1.0], dtype=np.float32)])
    return model


def _images(n=2):
    x = np.zeros((n, 16, 16, 3), dtype=np.float32)
    x[:, :4, :4, 0] = 1.0
    return x


def test_saliency_masks_light_up_the_pixels_the_model_reads():
    net = SaliencyNet(_top_left_model(), model_inputs="x", model_outputs="y_pred")
    masks = net.get_masks({"x": _images()})
    assert all(isinstance(value, tf.Tensor) for value in masks.values())  # tf tensors, as FastEstimator
    assert masks["y_pred"].numpy().tolist() == [0, 0]
    mask = masks["saliency"].numpy()
    assert mask.shape == (2, 16, 16, 1)  # the input's layout, one channel (as FastEstimator)
    assert (mask[:, :4, :4] == 1.0).all() and (mask[:, 4:, :] == 0.0).all()
    integrated = net.get_integrated_masks({"x": tf.constant(_images())}, nsamples=3)["saliency"]
    assert isinstance(integrated, tf.Tensor)
    integrated = integrated.numpy()
    assert (integrated[:, :4, :4] > 0.9).all() and (integrated[:, 8:, 8:] == 0).all()


def test_saliency_trace_uses_fixed_samples_and_tf_tensors_never_leak():
    trace = Saliency(_top_left_model(), model_inputs="x", model_outputs="y_pred", samples={"x": _images(1)},
                     smoothing=0, integrating=0)
    system = System(network=None, pipeline=None, traces=[trace], mode="test", ds_id="")
    system.epoch_idx = 1
    trace.system = system
    assert trace.inputs == []
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data({}))
    end = Data()
    trace.on_epoch_end(end)
    assert [column.title for column in end["saliency"].columns] == ["y_pred", "x", "saliency (x)"]
    assert isinstance(trace.last_masks["saliency_0"], np.ndarray)
    with pytest.raises(ValueError, match="samples"):
        Saliency(_top_left_model(), "x", "y", samples=0)
    assert tf.executing_eagerly()


def test_grad_cam_and_eigen_cam_from_a_keras_cnn_with_fe_backend_gradients():
    from fe_core.backend import get_gradient
    from fe_core.trace.xai import EigenCAM, GradCAM
    inputs = keras.Input((8, 8, 1))
    conv = keras.layers.Conv2D(4, 3, padding="same", activation="relu", name="conv")(inputs)
    dense = keras.layers.Dense(2)
    logits = dense(keras.layers.GlobalAveragePooling2D()(conv))
    model = keras.Model(inputs, [logits, conv])
    dense.set_weights([np.ones((4, 2), np.float32), np.zeros(2, np.float32)])  # every channel raises class 0
    images = np.zeros((2, 8, 8, 1), dtype=np.float32)
    images[:, :3, :3] = 1.0
    x = tf.constant(images)
    with tf.GradientTape(persistent=True) as tape:
        scores, features = model(x, training=False)
        score = tf.reduce_sum(scores[:, 0])
    grads = get_gradient(score, features, tape=tape)
    del tape
    grads = (grads * tf.cast(features > 0, grads.dtype)).numpy()  # gradients only where the layer is active
    system = System(network=type("Net", (), {"backend": type("B", (), {"name": "tf"})()})(), pipeline=None,
                    traces=[], mode="eval", ds_id="")
    system.epoch_idx = 1
    for trace, key, value in ((GradCAM(images="x", grads="g"), "g", grads),
                              (EigenCAM(images="x", activations="g", n_components=1), "g", features.numpy())):
        trace.system = system
        trace.on_epoch_begin(Data())
        trace.on_batch_end(Data({"x": images, key: value}))
        trace.on_epoch_end(Data())
        heat = trace.last_overlays[0]
        assert heat.shape == (2, 8, 8, 3)
        redness = heat[..., 0] - heat[..., 2]  # hot (red) minus cold (blue)
        assert redness[:, :4, :4].max() > 0.2 and redness[:, 5:, 5:].max() < 0, type(trace).__name__
