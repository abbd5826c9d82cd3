"""A FastEstimator 1.x-style script runs unchanged on each backend: Pipeline ops, ModelOp, CrossEntropy, UpdateOp,
Accuracy and BestModelSaver; fit, then test, then transform for inference. Only the architecture's import differs
(and the channel axis the CNN expects), as in FastEstimator."""
from __future__ import annotations

import contextlib
import importlib
import io
import os
from types import SimpleNamespace

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


@pytest.fixture(scope="module", params=[pytest.param(backend.values, id=backend.id) for backend in BACKENDS])
def script_run(request, tmp_path_factory):
    """One fit (3 epochs) and test of the script per backend, which both tests below read (one training run per
    backend instead of two: CI time). Its console output is kept, as a user sees it."""
    architecture, channel_axis, extension = request.param
    save_dir = tmp_path_factory.mktemp(f"script_{architecture}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fe.enable_deterministic(7)
        pipeline, network, estimator, test_data = fastestimator_script(architecture, channel_axis, str(save_dir))
        summary = estimator.fit("digits")
        test_summary = estimator.test("digits")
    return SimpleNamespace(architecture=architecture, channel_axis=channel_axis, extension=extension,
                           save_dir=save_dir, pipeline=pipeline, network=network, test_data=test_data,
                           summary=summary, test_summary=test_summary, out=out.getvalue())


def test_a_fastestimator_script_trains_tests_and_infers(script_run):
    run = script_run
    summary, pipeline, network, test_data = run.summary, run.pipeline, run.network, run.test_data
    assert summary is not None and summary.name == "digits"
    eval_accuracy = summary.history["eval"]["accuracy"]
    assert len(eval_accuracy) == 3
    assert max(float(v) for v in eval_accuracy.values()) > 0.8
    assert os.path.isfile(run.save_dir / f"lenet_best_accuracy{run.extension}")

    test_accuracy = float(next(iter(run.test_summary.history["test"]["accuracy"].values())))
    assert test_accuracy > 0.8
    out = run.out
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


def test_saved_best_weights_reproduce_the_test_accuracy(script_run):
    """The BestModelSaver file is the model the test ran with: loading it with fe.build gives the same accuracy."""
    run = script_run
    first = run.test_summary.history["test"]["accuracy"]
    weights = str(run.save_dir / f"lenet_best_accuracy{run.extension}")
    LeNet = importlib.import_module(f"fe.architecture.{run.architecture}").LeNet  # pylint: disable=invalid-name
    train_data, eval_data, test_data = load_digits_datasets(seed=1)
    pipeline = fe.Pipeline(test_data=test_data, batch_size=32,
                           ops=[UpscaleDigits(inputs="x", outputs="x"),
                                ExpandDims(inputs="x", outputs="x", axis=run.channel_axis),
                                Minmax(inputs="x", outputs="x")])
    model = fe.build(model_fn=LeNet, optimizer_fn="adam", weights_path=weights, model_name="reloaded")
    network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred")])
    again = fe.Estimator(pipeline=pipeline, network=network, epochs=1,
                         traces=[Accuracy(true_key="y", pred_key="y_pred")], log_steps=0)
    second = again.test("second").history["test"]["accuracy"]
    assert float(next(iter(second.values()))) == pytest.approx(float(next(iter(first.values()))), abs=1e-9)
