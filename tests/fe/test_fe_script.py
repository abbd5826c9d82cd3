"""A FastEstimator 1.x-style script runs unchanged on each backend: Pipeline ops, ModelOp, CrossEntropy, UpdateOp,
Accuracy and BestModelSaver; fit, then test, then transform for inference. Only the architecture's import differs
(and the channel axis the CNN expects), as in FastEstimator."""
from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import fe
from fe.examples.digits import UpscaleDigits, load_digits_datasets
from fe.op.numpyop.univariate import ExpandDims, Minmax
from fe.op.tensorop.loss import CrossEntropy
from fe.op.tensorop.model import ModelOp, UpdateOp
from fe.trace.io import BestModelSaver
from fe.trace.metric import Accuracy

BACKENDS = [
    pytest.param("pytorch", 0, ".pt", id="torch"),
    pytest.param("tensorflow", -1, ".h5", id="tf"),  # FastEstimator's name (Keras 3's weights format inside)
]


def fastestimator_script(architecture: str, channel_axis: int, save_dir: str, epochs: int = 3):
    """What a FastEstimator user writes (with `import fe` instead of `import fastestimator as fe`)."""
    LeNet = importlib.import_module(f"fe.architecture.{architecture}").LeNet  # pylint: disable=invalid-name
    train_data, eval_data, test_data = load_digits_datasets(seed=1)
    pipeline = fe.Pipeline(train_data=train_data,
                           eval_data=eval_data,
                           test_data=test_data,
                           batch_size=32,
                           ops=[UpscaleDigits(inputs="x", outputs="x"),
                                ExpandDims(inputs="x", outputs="x", axis=channel_axis),
                                Minmax(inputs="x", outputs="x")])
    model = fe.build(model_fn=LeNet, optimizer_fn="adam", model_name="lenet")
    network = fe.Network(ops=[
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        UpdateOp(model=model, loss_name="ce"),
    ])
    traces = [
        Accuracy(true_key="y", pred_key="y_pred"),
        BestModelSaver(model=model, save_dir=save_dir, metric="accuracy", save_best_mode="max", load_best_final=True),
    ]
    estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=10)
    return pipeline, network, estimator, test_data


@pytest.mark.parametrize("architecture, channel_axis, extension", BACKENDS)
def test_a_fastestimator_script_trains_tests_and_infers(architecture, channel_axis, extension, tmp_path, capsys):
    fe.enable_deterministic(7)
    pipeline, network, estimator, test_data = fastestimator_script(architecture, channel_axis, str(tmp_path))

    summary = estimator.fit("digits")
    assert summary is not None and summary.name == "digits"
    eval_accuracy = summary.history["eval"]["accuracy"]
    assert len(eval_accuracy) == 3
    assert max(float(v) for v in eval_accuracy.values()) > 0.8
    assert os.path.isfile(tmp_path / f"lenet_best_accuracy{extension}")

    test_summary = estimator.test("digits")
    test_accuracy = float(next(iter(test_summary.history["test"]["accuracy"].values())))
    assert test_accuracy > 0.8
    out = capsys.readouterr().out
    assert "FastEstimator-Train: step: 10; ce:" in out
    assert "FastEstimator-BestModelSaver: Restoring model from" in out
    assert "FastEstimator-Test: step: 120; epoch: 3; accuracy:" in out

    # inference on single samples, as FastEstimator users do it
    hits = 0
    for index in range(20):
        sample = test_data[index]
        batch = pipeline.transform({"x": sample["x"]}, mode="infer")
        assert np.shape(batch["x"])[0] == 1
        prediction = network.transform(batch, mode="infer")["y_pred"].numpy()  # framework tensors, as FastEstimator
        assert np.shape(prediction) == (1, 10)
        np.testing.assert_allclose(np.sum(prediction), 1.0, rtol=1e-4)
        hits += int(np.argmax(prediction) == sample["y"])
    assert hits >= 15


@pytest.mark.parametrize("architecture, channel_axis, extension", BACKENDS)
def test_saved_best_weights_reproduce_the_test_accuracy(architecture, channel_axis, extension, tmp_path):
    """The BestModelSaver file is the model the test ran with: loading it with fe.build gives the same accuracy."""
    _, _, estimator, _ = fastestimator_script(architecture, channel_axis, str(tmp_path), epochs=2)
    estimator.fit()
    first = estimator.test("first").history["test"]["accuracy"]
    weights = str(tmp_path / f"lenet_best_accuracy{extension}")
    LeNet = importlib.import_module(f"fe.architecture.{architecture}").LeNet  # pylint: disable=invalid-name
    train_data, eval_data, test_data = load_digits_datasets(seed=1)
    pipeline = fe.Pipeline(test_data=test_data, batch_size=32,
                           ops=[UpscaleDigits(inputs="x", outputs="x"),
                                ExpandDims(inputs="x", outputs="x", axis=channel_axis),
                                Minmax(inputs="x", outputs="x")])
    model = fe.build(model_fn=LeNet, optimizer_fn="adam", weights_path=weights, model_name="reloaded")
    network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred")])
    again = fe.Estimator(pipeline=pipeline, network=network, epochs=1,
                         traces=[Accuracy(true_key="y", pred_key="y_pred")], log_steps=0)
    second = again.test("second").history["test"]["accuracy"]
    assert float(next(iter(second.values()))) == pytest.approx(float(next(iter(first.values()))), abs=1e-9)
