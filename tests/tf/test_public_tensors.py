"""TensorFlow tensors at fe's public boundary (an install with TensorFlow and no torch): Pipeline.get_results (tf
tensors; a tf.data source yields its own), Network.transform (which steps the model in 'train' mode), slicers called
directly and user Slicers written with tf ops, inside and outside tf.function."""
from __future__ import annotations

from typing import Any, List, Tuple

import keras
import numpy as np
import tensorflow as tf

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.framework.public import public_framework
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.slicer import AxisSlicer, MeanUnslicer, Slicer, SlidingSlicer, forward_slicers, reverse_slicers


def data(n: int = 8) -> dict:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return {"x": x, "y": x.sum(axis=1, keepdims=True)}


def regression_network(slicers: Any = None) -> Tuple[Any, Any]:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)]),
                  optimizer_fn=lambda: keras.optimizers.SGD(0.1))
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")], slicers=slicers)
    return model, network


def test_get_results_returns_tf_tensors_where_torch_is_not_installed() -> None:
    assert public_framework() == "tf"
    batch = Pipeline(train_data=NumpyDataset(data()), batch_size=4).get_results()
    assert isinstance(batch["x"], tf.Tensor)
    np.testing.assert_array_equal(batch["x"].numpy(), data()["x"][:4])


def test_the_loader_answers_dataset_batch_size_and_drop_last_from_the_pipeline() -> None:
    dataset = NumpyDataset(data())
    with Pipeline(train_data=dataset, batch_size=3)(mode="train", shuffle=False) as loader:
        assert loader.dataset is dataset and loader.batch_size == 3 and loader.get_batch_size() == 3
        assert loader.drop_last is False and len(loader) == 3
        assert [int(tf.shape(batch["x"])[0]) for batch in loader] == [3, 3, 2]


def test_get_results_of_a_tf_data_source_returns_its_own_batches() -> None:
    source = tf.data.Dataset.from_tensor_slices({"x": np.arange(10, dtype=np.int64)}).batch(4)
    pipeline = Pipeline(train_data=source)
    first = pipeline.get_results()
    assert isinstance(first["x"], tf.Tensor) and first["x"].numpy().tolist() == [0, 1, 2, 3]
    several = pipeline.get_results(num_steps=2)
    assert len(several) == 2 and several[1]["x"].numpy().tolist() == [4, 5, 6, 7]
    assert len(pipeline.get_results(num_steps=10)) == 3


def test_transform_returns_tf_tensors_and_steps_the_model_in_train_mode() -> None:
    model, network = regression_network()
    result = network.transform(data(), mode="eval")
    assert isinstance(result["y_pred"], tf.Tensor) and isinstance(result["x"], tf.Tensor)
    np.testing.assert_allclose(result["y_pred"].numpy(), model(data()["x"]).numpy(), rtol=1e-5)
    batch = Pipeline(eval_data=NumpyDataset(data()), batch_size=8).get_results(mode="eval")
    again = network.transform(batch, mode="eval")  # get_results' tensors go straight into transform
    np.testing.assert_allclose(again["y_pred"].numpy(), result["y_pred"].numpy(), rtol=1e-6)
    before = [np.array(w) for w in model.get_weights()]
    losses = [float(network.transform(data(), mode="train")["mse"]) for _ in range(5)]
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert losses[-1] < losses[0]
    graph_losses = [float(r["mse"]) for r in network.transform([data(), data()], mode="train")]  # tf.function
    assert graph_losses[1] < graph_losses[0] < losses[-1]


def test_builtin_slicers_return_the_tf_tensors_they_were_given() -> None:
    x = tf.reshape(tf.range(24.0), (2, 3, 4))
    pieces = AxisSlicer(axis=1, slice="x")._slice_batch(x)  # pylint: disable=protected-access
    assert len(pieces) == 3 and all(isinstance(piece, tf.Tensor) for piece in pieces)
    fused = AxisSlicer(axis=1, slice="x")._unslice_batch(tuple(pieces), key="x")  # pylint: disable=protected-access
    assert isinstance(fused, tf.Tensor) and np.array_equal(fused.numpy(), x.numpy())
    sliding = SlidingSlicer(window_size=[-1, -1, 2], slice="x")
    windows = sliding.slice_batches((x,))
    assert all(isinstance(w[0], tf.Tensor) for w in windows)
    mean = MeanUnslicer("loss")._unslice_batch(  # pylint: disable=protected-access
        (tf.constant(1.0), tf.constant(3.0)), key="loss")
    assert isinstance(mean, tf.Tensor) and float(mean) == 2.0
    slicers = [AxisSlicer(axis=0, slice="x", minibatch_size=1), MeanUnslicer("loss")]
    minibatches = forward_slicers(slicers, {"x": x})
    results = [dict(m, loss=tf.reduce_mean(m["x"])) for m in minibatches]
    back = reverse_slicers(slicers, results, {"x": x})
    assert isinstance(back["x"], tf.Tensor) and isinstance(back["loss"], tf.Tensor)


class TFHalves(Slicer):
    """A user's slicer written with tf ops, as FastEstimator users write them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: List[type] = []

    def _slice_batch(self, batch: tf.Tensor) -> List[tf.Tensor]:
        self.seen.append(type(batch))
        return tf.split(batch, 2, axis=0)

    def _unslice_batch(self, slices: Tuple[tf.Tensor, ...], key: str) -> tf.Tensor:
        self.seen.append(type(slices[0]))
        return tf.concat(slices, axis=0)


def test_a_user_slicer_with_tf_ops_runs_in_the_network() -> None:
    slicer = TFHalves(slice=["x", "y"], unslice=["x", "y", "y_pred"])
    model, network = regression_network(slicers=[slicer, MeanUnslicer("mse")])
    result = network.transform(data(), mode="eval")
    assert slicer.seen and all(issubclass(kind, tf.Tensor) for kind in slicer.seen)
    np.testing.assert_allclose(result["y_pred"].numpy(), model(data()["x"]).numpy(), rtol=1e-5)
    assert isinstance(result["mse"], tf.Tensor)
