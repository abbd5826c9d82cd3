"""AutoGraph and tracing of TFNetwork's step: fe's own code is traced without AutoGraph conversion, user code still is
converted (tensor-dependent `if`/`for` in a TensorOp's forward, a LambdaOp's function, a user op inside a meta op),
warmup traces nothing, and `fit` with train and eval traces each step once."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.autograph.impl import api as autograph_api

from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, LambdaOp, ModelOp, TensorOp, UpdateOp
from fe_core.op.tensorop.meta import Sometimes
from fe_core.pipeline import Pipeline
from fe_tf import TFNetwork
from tf_testing import build_dense, classifier_network


class SignDependent(TensorOp):
    """Doubles x where its sum is positive, else subtracts 1; then adds 1 three times in a tensor loop. Counts how often
    its forward runs in Python (each eager step and each trace)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.python_calls = 0

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        self.python_calls += 1
        if tf.reduce_sum(data) > 0:  # a tensor condition: AutoGraph makes it tf.cond
            out = data * 2.0
        else:
            out = data - 1.0
        for _ in tf.range(3):  # a tensor loop: AutoGraph makes it tf.while_loop
            out = out + 1.0
        return out


def expected(x: np.ndarray) -> np.ndarray:
    return (x * 2.0 if x.sum() > 0 else x - 1.0) + 3.0


def run_steps(network: TFNetwork, batches: List[Dict[str, np.ndarray]], key: str) -> List[np.ndarray]:
    with network(mode="eval", epoch=1):
        return [np.asarray(network.run_step(dict(batch))[key]) for batch in batches]


BATCHES = [{"x": np.array([[1.0, 2.0], [0.5, 0.5]], np.float32)},
           {"x": np.array([[-1.0, -2.0], [0.5, -3.0]], np.float32)}]


class ConversionLog:
    """Records the names of the functions AutoGraph converts while it is active."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: List[str] = []
        convert = autograph_api._convert_actual  # pylint: disable=protected-access

        def logged(entity: Any, program_ctx: Any) -> Any:
            self.names.append(getattr(entity, "__qualname__", repr(entity)))
            return convert(entity, program_ctx)

        monkeypatch.setattr(autograph_api, "_convert_actual", logged)


def test_fe_step_code_is_not_converted_by_autograph(monkeypatch: pytest.MonkeyPatch) -> None:
    log = ConversionLog(monkeypatch)
    model = build_dense(in_dim=4, out_dim=3, activation="softmax")
    network = classifier_network(model)
    batch = {"x": np.ones((2, 4), np.float32), "y": np.array([0, 2])}
    with network(mode="train", epoch=1):
        loss = network.run_step(dict(batch))["ce"]
    assert network.trace_count == 1
    assert np.shape(loss) == ()  # the batch's mean cross entropy
    assert log.names == []  # neither the step body, the op runner nor the kernels


def test_a_user_forward_with_tensor_control_flow_is_converted_and_computes_both_branches(
        monkeypatch: pytest.MonkeyPatch) -> None:
    log = ConversionLog(monkeypatch)
    op = SignDependent(inputs="x", outputs="y")
    network = make_network(ops=[op], default_backend="tf")
    results = run_steps(network, BATCHES, "y")
    assert network.trace_count == 1  # one graph, both branches inside it
    for batch, result in zip(BATCHES, results):
        np.testing.assert_allclose(result, expected(batch["x"]))
    assert "SignDependent.forward" in log.names
    assert not {"_StepProgram.body", "_StepProgram._body", "BaseNetwork.run_ops"} & set(log.names)


def test_user_code_inside_fe_ops_is_converted_too() -> None:
    def clip_sign(x: tf.Tensor) -> tf.Tensor:
        if tf.reduce_max(x) > 1.0:
            return tf.minimum(x, 1.0)
        return x * 10.0

    wrapped = SignDependent(inputs="x", outputs="x")
    network = make_network(ops=[LambdaOp(fn=clip_sign, inputs="x", outputs="y"),
                                Sometimes(wrapped, prob=1.0)], default_backend="tf")
    with network(mode="eval", epoch=1):
        results = [network.run_step(dict(batch)) for batch in BATCHES]
        values = [(np.asarray(result["y"]), np.asarray(result["x"])) for result in results]
    assert network.trace_count == 1
    for batch, (y, wrapped_x) in zip(BATCHES, values):
        x = batch["x"]
        np.testing.assert_allclose(y, np.minimum(x, 1.0) if x.max() > 1.0 else x * 10.0)
        np.testing.assert_allclose(wrapped_x, expected(x))


class ScaledCrossEntropy(CrossEntropy):
    """A user subclass of an fe op whose forward calls the fe forward through super() and branches on a tensor."""

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        loss = super().forward(data, state)
        if tf.reduce_mean(loss) > 100.0:
            loss = loss * 0.0
        return loss * 2.0


def test_a_user_subclass_calling_super_forward_traces_and_trains() -> None:
    model = build_dense(in_dim=4, out_dim=3, activation="softmax")
    reference = build_dense(in_dim=4, out_dim=3, activation="softmax")
    reference.set_weights(model.get_weights())
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                ScaledCrossEntropy(inputs=("y_pred", "y"), outputs="ce", average_loss=False),
                                UpdateOp(model=model, loss_name="ce")])
    batch = {"x": np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), "y": np.array([0, 2])}
    with network(mode="train", epoch=1):
        loss = np.asarray(network.run_step(dict(batch))["ce"])
    prediction = reference(batch["x"]).numpy()
    plain = -np.log(prediction[np.arange(2), batch["y"]])
    np.testing.assert_allclose(loss, 2.0 * plain, rtol=1e-5)
    assert network.trace_count == 1
    assert not np.allclose(model.get_weights()[0], reference.get_weights()[0])  # the update ran


class CountingOp(TensorOp):
    """Passes x through, counting the Python calls of its forward (eager steps and traces)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.python_calls = 0

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        self.python_calls += 1
        return data


def small_task(count: int, seed: int) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    return NumpyDataset({"x": rng.standard_normal((count, 4)).astype(np.float32),
                         "y": rng.integers(0, 3, count).astype(np.int64)})


def test_fit_with_train_and_eval_traces_each_step_once_and_warmup_traces_nothing() -> None:
    model = build_dense(in_dim=4, out_dim=3, activation="softmax")
    counter = CountingOp(inputs="x", outputs="x")
    network = make_network(ops=[counter, ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=small_task(40, 0), eval_data=small_task(20, 1), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, log_steps=None)
    estimator._warmup(eager=False)  # pylint: disable=protected-access
    assert network.trace_count == 0  # warmup ran one eager step per mode
    assert counter.python_calls == 2
    estimator.fit(warmup=False)
    # one trace for training, one for eval (a smaller last batch and later epochs reuse them)
    assert network.trace_count == 2
    assert counter.python_calls == 4
    functions = [graph.function for program in network._programs.values()  # pylint: disable=protected-access
                 for graph in program.graphs]
    assert len(functions) == 2
    assert [function.experimental_get_tracing_count() for function in functions] == [1, 1]


def test_a_full_fit_traces_twice_and_warmup_changes_no_weight() -> None:
    model = build_dense(in_dim=4, out_dim=3, activation="softmax")
    network = classifier_network(model)
    pipeline = Pipeline(train_data=small_task(24, 0), eval_data=small_task(16, 1), batch_size=8)
    before = [np.array(weight) for weight in model.get_weights()]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None)
    estimator._warmup(eager=False)  # pylint: disable=protected-access
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)
    estimator.fit()
    assert network.trace_count == 2


def test_transform_of_several_batches_traces_once() -> None:
    op = SignDependent(inputs="x", outputs="y")
    network = make_network(ops=[op], default_backend="tf")
    batches = BATCHES + BATCHES
    results = network.transform(batches, mode="eval")
    assert network.trace_count == 1  # a real step (not warmup), as in FastEstimator: every batch shares one graph
    assert op.python_calls == 1
    assert all(isinstance(result["y"], tf.Tensor) for result in results)
    for batch, result in zip(batches, results):
        np.testing.assert_allclose(result["y"], expected(batch["x"]))
