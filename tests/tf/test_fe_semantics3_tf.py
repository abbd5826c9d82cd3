"""FastEstimator semantics, part 3 (issue 36) on TensorFlow: loader batches and a user Trace's `data` hold tf tensors
(in an install without torch), a tf.data.Dataset given as data comes back unchanged, `fe.types` works with isinstance,
SuperLoss exposes its state, and CalibrationError / ReduceLROnPlateau / Accuracy take tf values as FastEstimator's."""
from __future__ import annotations

import sys
from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.framework.public import public_framework
from fe_core.pipeline import Pipeline
from fe_core.trace.metric import Accuracy
from fe_core.trace.trace import Trace
from fe_core.types import Array, DataSequence, Model, Tensor
from semantics3_helpers import PerDSReader, calibration_error_in_two_batches
from tf_testing import classifier_network, dense_model

TORCH_INSTALLED = public_framework() == "torch"  # (a tests/torch directory on sys.path is no torch install)


def _arrays(n: int, seed: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(n, 4)).astype(np.float32), "y": (np.arange(n) % 3).astype(np.int64)}


class Reader(Trace):
    """A FastEstimator-style user trace: calls `.numpy()` on what it reads."""

    def __init__(self) -> None:
        super().__init__(inputs=("x", "y", "y_pred", "ce"), outputs="pred_mean")
        self.seen: List[Any] = []

    def on_batch_begin(self, data: Data) -> None:
        if "x" in data:
            self.seen.append(("begin", tf.is_tensor(data["x"])))

    def on_batch_end(self, data: Data) -> None:
        self.seen.append(("end", tf.is_tensor(data["y_pred"]), data["y_pred"].numpy().shape, tf.is_tensor(data["y"]),
                          tf.is_tensor(data["ce"])))
        data.write_with_log("pred_mean", float(data["y_pred"].numpy().mean()))


@pytest.fixture(scope="module")
def fitted() -> Dict[str, Any]:
    """One short run (train + two eval datasets) shared by the tests below."""
    keras.utils.set_random_seed(0)
    model = build(model_fn=lambda: dense_model(activation="softmax"), optimizer_fn="adam")
    pipeline = Pipeline(train_data=NumpyDataset(_arrays(16, 0)),
                        eval_data={"a": NumpyDataset(_arrays(8, 1)), "b": NumpyDataset(_arrays(4, 2))}, batch_size=4)
    reader = Reader()
    summary = Estimator(pipeline=pipeline, network=classifier_network(model), epochs=1, log_steps=1,
                        traces=[reader, PerDSReader(), Accuracy(true_key="y", pred_key="y_pred")]).fit("run")
    return {"summary": summary, "reader": reader, "pipeline": pipeline}


# ------------------------------------------------------------------------------------------------ item 1
def test_a_user_trace_reads_tf_tensors(fitted: Dict[str, Any]) -> None:
    seen = fitted["reader"].seen
    assert ("begin", True) in seen
    ends = [entry for entry in seen if entry[0] == "end"]
    assert len(ends) == 4 + 2 + 1
    assert {entry[1:] for entry in ends} == {(True, (4, 3), True, True)}
    assert len(fitted["summary"].history["train"]["pred_mean"]) == 4


def test_fe_traces_and_a_per_ds_user_trace_in_the_same_run(fitted: Dict[str, Any]) -> None:
    history = fitted["summary"].history["eval"]
    assert list(history["rows|a"].values()) == [8] and list(history["rows|b"].values()) == [4]
    assert 0.0 <= float(list(history["accuracy"].values())[0]) <= 1.0


@pytest.mark.skipif(TORCH_INSTALLED, reason="with torch installed, loaders yield torch tensors (as FastEstimator's)")
def test_hand_iterated_loader_yields_tf_tensors(fitted: Dict[str, Any]) -> None:
    pipeline = fitted["pipeline"]
    with pipeline(mode="train", shuffle=False) as loader:
        batches = list(loader)
    assert len(batches) == 4 and all(tf.is_tensor(batch["x"]) for batch in batches)
    np.testing.assert_array_equal(np.concatenate([batch["x"].numpy() for batch in batches]), _arrays(16, 0)["x"])
    assert batches[0]["y"].dtype == tf.int64
    with pipeline as loader:
        assert tf.is_tensor(next(iter(loader))["x"])


def test_a_tf_dataset_given_as_data_comes_back_unchanged() -> None:
    dataset = tf.data.Dataset.from_tensor_slices({"x": np.ones((6, 2), np.float32), "y": np.arange(6)}).batch(3)
    pipeline = Pipeline(train_data=dataset, eval_data=dataset)
    with pipeline(mode="train") as loader:
        assert loader is dataset
    with pipeline(mode="eval", epoch=2) as loader:
        assert loader is dataset
    with pipeline as loader:
        assert loader is dataset
        assert [int(batch["x"].shape[0]) for batch in loader] == [3, 3]


# ------------------------------------------------------------------------------------------------ item 2
def test_fe_types_isinstance_on_tf_values() -> None:
    assert isinstance(tf.ones(1), Tensor) and isinstance(tf.Variable(1.0), Tensor) and isinstance(tf.ones(1), Array)
    assert isinstance(dense_model(), Model) and not isinstance(tf.ones(1), Model)
    assert isinstance(tf.ones(2), DataSequence) and not isinstance(np.zeros(1), Tensor)

    @tf.function
    def inside(x):
        assert isinstance(x, Tensor)  # a symbolic tensor in a tf.function is a tf.Tensor too
        return x * 2

    assert float(inside(tf.constant(2.0))) == 4.0
    if not TORCH_INSTALLED:
        assert "torch" not in sys.modules


# ------------------------------------------------------------------------------------------------ items 7 and 9
def test_calibration_error_on_tf_tensors_is_rounded_to_four_digits() -> None:
    preds = tf.constant([[1.0, 0.0]] * 50 + [[0.5, 0.5]] * 50)
    labels = tf.constant([0] * 50 + [1] * 50)
    error, end = calibration_error_in_two_batches(labels, preds)
    assert len(error.y_true) == 100
    assert end["calibration_error"] == 0.3536


def test_super_loss_exposes_initialized_and_tau() -> None:
    from fe_core.op.tensorop.loss import CrossEntropy  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop.regularized_losses import SuperLoss  # pylint: disable=import-outside-toplevel
    loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    assert loss.initialized == {} and loss.tau == {}
    loss.build("tf")
    assert not bool(loss.initialized["train"]) and float(loss.tau["train"]) == 0.0
    loss.forward([tf.constant([[0.9, 0.1], [0.2, 0.8]]), tf.constant([0, 0])], {"mode": "train", "warmup": False})
    assert bool(loss.initialized["train"]) and isinstance(loss.tau["train"], tf.Variable)
    assert float(loss.tau["train"]) > 0.0 and not bool(loss.initialized["eval"])


def test_reduce_lr_on_plateau_logs_the_float32_rate(capsys: pytest.CaptureFixture) -> None:
    from fe_core.trace.adapt import ReduceLROnPlateau  # pylint: disable=import-outside-toplevel
    model = build(model_fn=dense_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=0.001))
    reducer = ReduceLROnPlateau(model, metric="loss", patience=1, factor=0.1)
    reducer.on_epoch_end(Data({"loss": 1.0}))
    end = Data({"loss": 2.0})
    reducer.on_epoch_end(end)
    logged = end.read_logs()["model_lr"]
    assert isinstance(logged, np.float32) and abs(float(logged) - 1e-4) < 1e-9
    assert capsys.readouterr().out == f"FastEstimator-ReduceLROnPlateau: learning rate reduced to {logged}\n"


def test_accuracy_with_negative_tf_labels_without_a_system() -> None:
    accuracy = Accuracy(true_key="y", pred_key="y_pred")
    accuracy.on_epoch_begin(Data())
    accuracy.on_batch_end(Data({"y": tf.constant([1, -1, 0, 1]), "y_pred": tf.constant([[0.8], [0.3], [0.4], [0.2]])}))
    end = Data()
    accuracy.on_epoch_end(end)
    assert float(end["accuracy"]) == 0.5
