"""`tf.data.Dataset` as Pipeline data: iterated as is, trained on, and seen by traces as numpy."""
from __future__ import annotations

from typing import Any, Set, Tuple

import keras
import numpy as np
import tensorflow as tf

from fe_core.framework import get_backend
from fe_core.build import build
from fe_core.estimator import Estimator
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from tf_testing import classifier_network, dense_model


def _dataset(count: int, seed: int, unknown_length: bool = False) -> tf.data.Dataset:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, count)
    x = rng.normal(size=(count, 4)).astype(np.float32)
    x[np.arange(count), y] += 3.0
    dataset = tf.data.Dataset.from_tensor_slices({"x": x, "y": y})
    if unknown_length:
        dataset = dataset.filter(lambda sample: sample["y"] >= 0)
    return dataset.batch(16)


class TypeRecorder(Trace):
    def __init__(self) -> None:
        super().__init__(inputs=("y", "y_pred"), mode="eval")
        self.types: Set[Tuple[str, str]] = set()
        self.correct = 0
        self.total = 0

    def on_batch_end(self, data: Any) -> None:
        self.types.add((type(data["y"]).__name__, type(data["y_pred"]).__name__))
        self.correct += int(np.sum(np.argmax(data["y_pred"], axis=-1) == data["y"]))
        self.total += len(data["y"])


def test_the_backend_recognises_tf_datasets_and_converts_their_batches() -> None:
    backend = get_backend("tf")
    dataset = _dataset(8, seed=0)
    assert backend.is_native_dataset(dataset)
    assert not backend.is_native_dataset([{"x": 1}])
    batch = backend.to_numpy(next(iter(dataset)))
    assert isinstance(batch["x"], np.ndarray) and batch["x"].shape == (8, 4)


def test_training_on_tf_datasets_of_known_and_unknown_length() -> None:
    model = build(model_fn=lambda: dense_model(activation="softmax"),
                  optimizer_fn=lambda: keras.optimizers.Adam(learning_rate=0.05))
    network = classifier_network(model)
    recorder = TypeRecorder()
    pipeline = Pipeline(train_data=_dataset(320, seed=1), eval_data=_dataset(96, seed=2, unknown_length=True))
    Estimator(pipeline=pipeline, network=network, epochs=3, traces=recorder, log_steps=None).fit()
    assert recorder.types == {("EagerTensor", "EagerTensor")}  # a user trace reads tf tensors, as in FastEstimator
    assert recorder.total == 3 * 96
    results = network.transform(pipeline, mode="eval")
    accuracy = np.mean(np.concatenate([np.argmax(r["y_pred"], -1) == r["y"] for r in results]))
    assert accuracy > 0.9
