"""Invalid configuration raises fe's message as an exception that old FastEstimator code catches (`except
AssertionError`, which FastEstimator asserts raise) and fe code catches (`except ValueError`, or `TypeError` where fe
raised one)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.backend.shapes import resize_3d
from fe_core.build import build, reset_build_count
from fe_core.config_error import ConfigurationError, ConfigurationTypeError
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.misuse import ConfigurationError as ReExported
from fe_core.modes import parse_modes
from fe_core.network import make_network
from fe_core.op.numpyop import LambdaOp as NumpyLambda
from fe_core.op.tensorop import LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.op.tensorop.shape_ops import Resize3D
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler, RepeatScheduler
from fe_core.trace import Trace
from fe_core.trace.adapt import LRScheduler
from fe_core.trace.io import BestModelSaver
from fe_core.trace.sort import sort_traces


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


def data() -> NumpyDataset:
    x = np.random.default_rng(0).normal(size=(8, 2)).astype(np.float32)
    return NumpyDataset({"x": x, "y": x[:, :1]})


def network(model: Any) -> Any:
    return make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                         MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"), UpdateOp(model=model, loss_name="mse")])


def raises_both(action: Callable[[], Any], match: str, type_error: bool = False) -> None:
    """`action` fails with fe's message, caught by `except AssertionError` and by `except ValueError`."""
    with pytest.raises(AssertionError, match=match) as caught:
        action()
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ConfigurationError)
    if type_error:
        assert isinstance(caught.value, TypeError)  # fe raised a TypeError here before: still one


class Reads(Trace):
    def __init__(self, inputs: Any, outputs: Any) -> None:
        super().__init__(inputs=inputs, outputs=outputs)


def test_the_error_classes():
    assert issubclass(ConfigurationError, ValueError) and issubclass(ConfigurationError, AssertionError)
    assert issubclass(ConfigurationTypeError, TypeError) and issubclass(ConfigurationTypeError, ConfigurationError)
    assert ReExported is ConfigurationError


def test_pipeline_ds_ids_and_ops():
    raises_both(lambda: Pipeline(train_data={"!a": data()}, batch_size=2), "must be a string not starting with '!'")
    raises_both(lambda: Pipeline(train_data={"a;b": data()}, batch_size=2), "forbidden character")
    raises_both(lambda: Pipeline(train_data=data(), ops=[LambdaOp(fn=lambda x: x, inputs="x", outputs="x")]),
                "Pipeline ops must be NumpyOps", type_error=True)


def test_network_ops_and_models():
    model = nb.build(2, 1, name="reg")
    raises_both(lambda: make_network([ModelOp(model=model, inputs="x", outputs="y"),
                                      NumpyLambda(fn=lambda x: x, inputs="x", outputs="x")]),
                "Network ops must be TensorOps", type_error=True)
    first, second = nb.build(2, 1, name="Net"), nb.build(2, 1, name="net")
    raises_both(lambda: make_network([ModelOp(model=first, inputs="x", outputs="a"),
                                      ModelOp(model=second, inputs="x", outputs="b")]), "Model names must be unique")


def test_build_with_inconsistent_counts():
    raises_both(lambda: build(model_fn=lambda: nb.LinearModel(2, 1), optimizer_fn=[0.1, 0.2]),
                "one optimizer, weights path and name per model")


def test_resize_modes():
    raises_both(lambda: Resize3D(inputs="x", outputs="x", output_shape=(2, 2, 2), resize_mode="bicubic"),
                "resize_mode must be one of")
    raises_both(lambda: resize_3d(np.zeros((1, 2, 2, 2, 1)), (4, 4, 4), resize_mode="area"), "only be resized")


def test_schedulers_and_modes():
    raises_both(lambda: EpochScheduler({0: 1}), "positive integers")
    raises_both(lambda: RepeatScheduler([]), "non-empty list")
    raises_both(lambda: parse_modes({"training"}), "Unknown mode")


def test_trace_dependencies():
    raises_both(lambda: sort_traces([Reads("a", "b"), Reads("b", "a")], ds_ids=None, available_outputs={"x"}),
                "cycle")
    raises_both(lambda: sort_traces([Reads("missing", "c")], ds_ids=None, available_outputs={"x"}),
                "unsatisfiable inputs: missing")


def test_traces_whose_metric_or_schedule_cannot_work():
    model = nb.build(2, 1, name="reg")
    saver = BestModelSaver(model, save_dir=None)
    estimator = Estimator(pipeline=Pipeline(train_data=data(), eval_data=data(), batch_size=4),
                          network=make_network([ModelOp(model=model, inputs="x", outputs="y_pred")]), epochs=1,
                          traces=[saver], log_steps=None)
    raises_both(estimator.fit, "cannot infer the loss of model 'reg'")
    raises_both(lambda: LRScheduler(model, lr_fn="cosine"), "is not supported")
    raises_both(lambda: LRScheduler(model, lr_fn=lambda x: 0.1), "one argument named 'step' or 'epoch'")


def test_an_op_restricted_to_a_missing_ds_id():
    model = nb.build(2, 1, name="reg")
    pipeline = Pipeline(train_data={"a": data()}, batch_size=4,
                        ops=[NumpyLambda(fn=lambda x: x, inputs="x", outputs="x", ds_id="b")])
    estimator = Estimator(pipeline=pipeline, network=network(model), epochs=1, log_steps=None)
    raises_both(estimator.fit, "the pipeline has no dataset 'b'")


def test_tensorop_arguments():
    from fe_core.op.tensorop import CrossEntropy
    from fe_core.op.tensorop.augmentation import MixUpBatch
    raises_both(lambda: MixUpBatch(inputs="x", outputs=["x", "y"]), "needs inputs \\(images, labels\\)")
    raises_both(lambda: MixUpBatch(inputs=["x", "y"], outputs=["x", "y"], alpha=0), "alpha must be greater than 0")
    raises_both(lambda: CrossEntropy(inputs=("y_pred", "y"), outputs="ce", form="hinge"), "form must be one of")
    raises_both(lambda: CrossEntropy(inputs=("y_pred", "y", "z"), outputs="ce").fe_check_keys(),
                "needs inputs \\(y_pred, y_true\\)")
