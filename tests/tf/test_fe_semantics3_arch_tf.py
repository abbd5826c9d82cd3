"""TF architectures are built layer for layer as FastEstimator's: the same layers, in the same order, with the
softmax inside the last Dense where FastEstimator puts it, so recipes that index layers (fine-tuning LeNet from
`model.layers[-3]`) and weights saved from FastEstimator's models keep working."""
from __future__ import annotations

import collections
import os
from typing import Any, Dict, List

import keras
import numpy as np
import pytest

from fe_core.build import build
from fe_tf.architecture import AttentionUNet, LeNet, ResNet9, UNet, WideResidualNetwork
from fe_tf.architecture.resnet9 import residual


def _kinds(model: Any) -> List[str]:
    return [type(layer).__name__ for layer in model.layers]


def _counts(model: Any) -> Dict[str, int]:
    return dict(collections.Counter(_kinds(model)))


def test_lenet_has_eight_layers_and_layer_minus_three_is_the_flatten() -> None:
    model = LeNet()
    assert _kinds(model) == ["Conv2D", "MaxPooling2D", "Conv2D", "MaxPooling2D", "Conv2D", "Flatten", "Dense", "Dense"]
    assert tuple(model.layers[-3].output.shape) == (None, 576)
    assert model.layers[-1].activation.__name__ == "softmax" and model.layers[-1].units == 10
    assert tuple(LeNet(input_shape=(32, 32, 3)).layers[-3].output.shape) == (None, 1024)
    probabilities = model(np.zeros((2, 28, 28, 1), np.float32)).numpy()
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-5)


def test_lenet_fine_tuning_recipe_takes_the_flattened_features() -> None:
    base = LeNet(input_shape=(32, 32, 3), classes=10)
    features = base.layers[-3].output
    head = keras.layers.Dense(5, activation="softmax")(keras.layers.Dense(32, activation="relu")(features))
    tuned = keras.Model(inputs=base.inputs[0], outputs=head)
    assert tuned.output_shape == (None, 5)
    assert tuned(np.zeros((1, 32, 32, 3), np.float32)).shape == (1, 5)
    assert tuned.layers[1] is base.layers[0]  # the pretrained layers are shared, not copied


def test_lenet_weights_path_loads_saved_weights(tmp_path: Any) -> None:
    source = LeNet()
    path = os.path.join(str(tmp_path), "lenet.weights.h5")
    source.save_weights(path)
    loaded = build(model_fn=LeNet, optimizer_fn="adam", weights_path=path)
    for a, b in zip(source.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_resnet9_layers_and_residual_branch() -> None:
    model = ResNet9(input_size=(16, 16, 3), classes=5)
    assert _counts(model) == {"InputLayer": 1, "Conv2D": 8, "BatchNormalization": 8, "LeakyReLU": 8,
                              "MaxPooling2D": 3, "Add": 2, "GlobalMaxPooling2D": 1, "Flatten": 1, "Dense": 1,
                              "Activation": 1}
    assert _kinds(model)[-4:] == ["GlobalMaxPooling2D", "Flatten", "Dense", "Activation"]
    inputs = keras.Input((4, 4, 8))
    branch = keras.Model(inputs, residual(inputs, 8))  # the branch only: the caller adds the shortcut
    assert _counts(branch) == {"InputLayer": 1, "Conv2D": 2, "BatchNormalization": 2, "LeakyReLU": 2}


def test_unet_has_fastestimator_dropouts_and_layer_counts() -> None:
    model = UNet(input_size=(16, 16, 1))
    assert _counts(model) == {"InputLayer": 1, "Conv2D": 23, "MaxPooling2D": 4, "Dropout": 2, "UpSampling2D": 4,
                              "Concatenate": 4}
    dropouts = [layer for layer in model.layers if isinstance(layer, keras.layers.Dropout)]
    assert [layer.rate for layer in dropouts] == [0.5, 0.5]
    assert [tuple(layer.output.shape)[-1] for layer in dropouts] == [512, 1024]
    assert model.layers[-1].activation.__name__ == "sigmoid"


def test_attention_unet_layer_counts() -> None:
    model = AttentionUNet(input_size=(16, 16, 1))
    assert _counts(model) == {"InputLayer": 1, "Conv2D": 35, "BatchNormalization": 12, "ReLU": 4, "Activation": 4,
                              "Add": 4, "Multiply": 4, "MaxPooling2D": 4, "Dropout": 2, "UpSampling2D": 4,
                              "Concatenate": 4}
    assert model.output_shape == (None, 16, 16, 1)


@pytest.mark.parametrize("widen_factor, dropout, expected", [
    (2, 0.2, {"InputLayer": 1, "Conv2D": 10, "BatchNormalization": 7, "Activation": 7, "Dropout": 3, "Add": 3,
              "MaxPooling2D": 2, "GlobalAveragePooling2D": 1, "Dense": 1}),
    (1, 0.0, {"InputLayer": 1, "Conv2D": 9, "BatchNormalization": 7, "Activation": 7, "Add": 3, "MaxPooling2D": 2,
              "GlobalAveragePooling2D": 1, "Dense": 1}),
])
def test_wide_residual_network_layers(widen_factor: int, dropout: float, expected: Dict[str, int]) -> None:
    model = WideResidualNetwork(input_shape=(8, 8, 3), depth=10, widen_factor=widen_factor, dropout=dropout,
                                classes=4)
    assert _counts(model) == expected
    assert [layer.momentum for layer in model.layers if isinstance(layer, keras.layers.BatchNormalization)] == \
        [0.9] * 7
    assert _kinds(model)[-2:] == ["GlobalAveragePooling2D", "Dense"]
    assert model.layers[-1].activation.__name__ == "softmax"
    assert model(np.zeros((2, 8, 8, 3), np.float32)).shape == (2, 4)


def test_saliency_masks_keep_the_input_layout_with_one_channel() -> None:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    from fe_core.xai import SaliencyNet  # pylint: disable=import-outside-toplevel
    images = np.random.default_rng(0).random((4, 28, 28, 1)).astype(np.float32)
    net = SaliencyNet(LeNet(), model_inputs="x", model_outputs="y_pred")
    masks = net.get_masks({"x": images})
    assert isinstance(masks["saliency"], tf.Tensor) and tuple(masks["saliency"].shape) == (4, 28, 28, 1)
    assert tuple(net.get_integrated_masks({"x": images}, nsamples=2)["saliency"].shape) == (4, 28, 28, 1)
    assert tuple(net.get_smoothed_masks({"x": images}, nsamples=2)["saliency"].shape) == (4, 28, 28, 1)
    rgb = SaliencyNet(ResNet9(input_size=(16, 16, 3)), model_inputs="x", model_outputs="y_pred")
    assert tuple(rgb.get_masks({"x": np.ones((2, 16, 16, 3), np.float32)})["saliency"].shape) == (2, 16, 16, 1)
