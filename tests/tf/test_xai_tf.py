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
    assert masks["y_pred"].tolist() == [0, 0]
    mask = masks["saliency"]
    assert mask.shape == (2, 16, 16)
    assert (mask[:, :4, :4] == 1.0).all() and (mask[:, 4:, :] == 0.0).all()
    integrated = net.get_integrated_masks({"x": _images()}, nsamples=3)["saliency"]
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
