"""ARC's numpy network computes what FastEstimator's Keras model computes, and reads Keras-format arc.h5 weights."""
from __future__ import annotations

import h5py
import keras
import numpy as np

from fe_core.schedule.arc import ARC, ArcNetwork


def keras_arc_model() -> keras.Model:
    return keras.Sequential([
        keras.Input(shape=(300, 3)),
        keras.layers.Conv1D(filters=32, kernel_size=5, activation="relu"),
        keras.layers.MaxPooling1D(pool_size=2),
        keras.layers.Conv1D(filters=64, kernel_size=5, activation="relu"),
        keras.layers.MaxPooling1D(pool_size=2),
        keras.layers.LSTM(64, return_sequences=True),
        keras.layers.LSTM(64),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])


def write_keras2_h5(model: keras.Model, path: str) -> None:
    """The layout of FastEstimator's arc.h5 (Keras 2 `save_weights`): one group per layer, named weights."""
    with h5py.File(path, "w") as file:
        names = []
        for layer in model.layers:
            names.append(layer.name.encode())
            group = file.create_group(layer.name)
            weight_names = []
            for index, weight in enumerate(layer.get_weights()):
                name = f"{layer.name}/{['kernel', 'recurrent_kernel', 'bias'][index] if 'lstm' in layer.name else ['kernel', 'bias'][index]}:0"
                group.create_dataset(name, data=weight)
                weight_names.append(name.encode())
            group.attrs["weight_names"] = weight_names
        file.attrs["layer_names"] = names


def test_numpy_network_matches_keras(tmp_path):
    model = keras_arc_model()
    inputs = np.random.default_rng(0).normal(size=(2, 300, 3)).astype(np.float32)
    expected = np.asarray(model(inputs, training=False))
    network = ArcNetwork()
    network.set_weights(model.get_weights())
    np.testing.assert_allclose(network(inputs), expected, rtol=1e-4, atol=1e-5)
    path = str(tmp_path / "arc.h5")
    write_keras2_h5(model, path)
    loaded = ArcNetwork()
    loaded.load_weights(path)
    np.testing.assert_allclose(loaded(inputs), expected, rtol=1e-4, atol=1e-5)
    arc = ARC(frequency=1, weights_path=path)
    for loss in (1.0, 0.8, 0.7, 0.65):
        arc.accumulate_single_train_loss(loss)
    arc.accumulate_all_lrs(0.01)
    arc.accumulate_single_eval_loss(0.9)
    arc.gather_multiple_train_losses()
    arc.gather_multiple_eval_losses()
    choice = int(np.argmax(np.asarray(model(arc.model_inputs(), training=False))))
    assert arc.predict_next_multiplier() == {0: 1.618, 1: 1.0, 2: 0.618}[choice]
