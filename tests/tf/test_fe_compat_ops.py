"""TensorFlow: FastEstimator's documented op behaviour (issue 28): loss ops driven directly, multi-output LossOps,
meta ops' return values, clip_by_value bounds (eagerly and inside the traced step)."""
from __future__ import annotations

from typing import Any, Dict, List

import keras
import numpy as np
import pytest
import tensorflow as tf

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, L1_Loss, LossOp, MeanSquaredError, ModelOp, TensorOp, UpdateOp

STATE: Dict[str, Any] = {"mode": "train", "warmup": False}


def _run(ops: List[TensorOp], batch: Dict[str, np.ndarray], eager: bool = False) -> Dict[str, Any]:
    network = make_network(ops=ops, default_backend="tf")
    with network(mode="train", epoch=1, eager=eager):
        result = network.run_step(dict(batch))
    return {key: np.asarray(result[key]) for key in result}


# ------------------------------------------------------------------------------------------------ item 1: losses
def test_loss_ops_take_any_inputs_when_built_and_run_directly() -> None:
    y_pred = tf.constant([[0.1, 0.9], [0.7, 0.3]])
    y_true = tf.constant([1, 0])
    ce = CrossEntropy(inputs="x", outputs="x", mode="test")
    expected = -(np.log(0.9) + np.log(0.7)) / 2
    assert float(ce.forward(data=[y_pred, y_true], state={})) == pytest.approx(expected, rel=1e-5)
    mse = MeanSquaredError(inputs="x", outputs="x")
    assert float(mse.forward(data=[tf.constant([1.0, 2.0]), tf.constant([1.0, 4.0])], state={})) == 2.0
    l1 = L1_Loss(inputs=None, outputs="x", average_loss=False)
    assert np.asarray(l1.forward(data=[tf.constant([[1.0], [2.0]]), tf.constant([[0.0], [4.0]])],
                                 state={})).tolist() == [1.0, 2.0]


def test_a_built_in_loss_checks_its_keys_when_it_joins_a_network() -> None:
    with pytest.raises(ValueError, match=r"CrossEntropy needs inputs \(y_pred, y_true\)"):
        make_network(ops=[CrossEntropy(inputs="pred", outputs="ce")], default_backend="tf")
    with pytest.raises(ValueError, match="MeanSquaredError needs exactly one output key"):
        make_network(ops=[MeanSquaredError(inputs=("p", "t"), outputs=("a", "b"))], default_backend="tf")


class _ThreePartLoss(LossOp):
    """A detection-style loss writing three loss terms (a box, a confidence and a class loss)."""

    def forward(self, data: List[tf.Tensor], state: Dict[str, Any]) -> List[tf.Tensor]:
        y_pred, y_true = data
        error = (y_pred - y_true)**2
        return [tf.reduce_mean(error[:, 0]), tf.reduce_mean(error[:, 1]), tf.reduce_mean(error[:, 2])]


class _Total(TensorOp):

    def forward(self, data: List[tf.Tensor], state: Dict[str, Any]) -> tf.Tensor:
        return data[0] + data[1] + data[2]


@pytest.mark.parametrize("eager", [True, False])
def test_a_loss_op_subclass_may_declare_several_outputs(eager: bool) -> None:
    model = build(model_fn=lambda: keras.Sequential([keras.Input((3, )), keras.layers.Dense(3)]), optimizer_fn="sgd")
    ops = [ModelOp(model=model, inputs="x", outputs="pred"),
           _ThreePartLoss(inputs=("pred", "y"), outputs=("box", "conf", "cls")),
           _Total(inputs=("box", "conf", "cls"), outputs="loss"),
           UpdateOp(model=model, loss_name="loss")]
    batch = {"x": np.ones((4, 3), np.float32), "y": np.zeros((4, 3), np.float32)}
    result = _run(ops, batch, eager=eager)
    total = float(result["box"]) + float(result["conf"]) + float(result["cls"])
    assert float(result["loss"]) == pytest.approx(total, rel=1e-5)


# ------------------------------------------------------------------------------------------------ item 2: meta ops
@pytest.mark.parametrize("eager", [True, False])
def test_repeat_reads_only_keys_that_exist_before_it_runs(eager: bool) -> None:
    from fe_core.op.tensorop import LambdaOp, Repeat  # pylint: disable=import-outside-toplevel
    static = Repeat(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y"), repeat=2)
    dynamic = Repeat(LambdaOp(fn=lambda z: z * 2, inputs="z", outputs="z"),
                     repeat=lambda z, limit: tf.reduce_max(z) < tf.reduce_max(limit))
    assert static.inputs == ["x"] and dynamic.inputs == ["z", "limit"]
    produced = Repeat(LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="w"), repeat=lambda w: tf.reduce_max(w) < 0)
    assert produced.inputs == ["x"]  # `w` is written by the op before the condition reads it
    result = _run([static, produced], {"x": np.ones((2, 1), np.float32)}, eager=eager)
    assert result["y"].tolist() == [[2.0], [2.0]] and result["w"].tolist() == [[2.0], [2.0]]
    grown = _run([dynamic], {"z": np.ones((2, ), np.float32), "limit": np.full((2, ), 5.0, np.float32)}, eager=eager)
    assert grown["z"].tolist() == [8.0, 8.0]


@pytest.mark.parametrize("eager", [True, False])
def test_one_of_returns_what_the_wrapped_op_returns(eager: bool) -> None:
    from fe_core.op.tensorop import LambdaOp, OneOf  # pylint: disable=import-outside-toplevel
    one_of = OneOf(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x"),
                   LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x"))
    result = one_of.forward([tf.constant([1.0, 2.0])], STATE)
    assert tf.is_tensor(result) and result.numpy().tolist() == [2.0, 3.0]  # not a one-element list
    pair = OneOf(LambdaOp(fn=lambda a, b: [b, a], inputs=("a", "b"), outputs=("a", "b")))
    swapped = pair.forward([tf.constant(1.0), tf.constant(2.0)], STATE)
    assert isinstance(swapped, list) and [float(v) for v in swapped] == [2.0, 1.0]
    assert _run([one_of], {"x": np.zeros((2, ), np.float32)}, eager=eager)["x"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------------------------ item 6
def test_clip_by_value_mixes_numbers_and_tensors_as_bounds() -> None:
    from fe_core.backend import clip_by_value  # pylint: disable=import-outside-toplevel
    values = tf.constant([-5.0, 4.0, 2.0, 0.0, 9.0])
    expected = [-2.0, 3.0, 2.0, 0.0, 3.0]
    assert clip_by_value(values, tf.constant(-2.0), 3).numpy().tolist() == expected
    assert clip_by_value(values, tf.constant(-2), tf.constant(3)).numpy().tolist() == expected  # int bounds
    assert clip_by_value(values, tf.zeros(5), 3).numpy().tolist() == [0.0, 3.0, 2.0, 0.0, 3.0]
    assert clip_by_value(tf.constant([-5, 4, 2]), -2.0, tf.constant(3.0)).numpy().tolist() == [-2, 3, 2]
    traced = tf.function(lambda x, low: clip_by_value(x, low, 3))
    assert traced(values, tf.constant(-2.0)).numpy().tolist() == expected


def test_watch_returns_every_value_in_order() -> None:
    from fe_core.op.tensorop import Watch  # pylint: disable=import-outside-toplevel
    data = tf.constant([1.0, 2.0, 4.0])
    with tf.GradientTape(persistent=True) as tape:
        output = Watch(inputs="x").forward(data=[data, data * data], state={"tape": tape})
        total = tf.reduce_sum(output[1])
    assert [value.numpy().tolist() for value in output] == [[1.0, 2.0, 4.0], [1.0, 4.0, 16.0]]
    assert tape.gradient(total, output[1]).numpy().tolist() == [1.0, 1.0, 1.0]


class _Fixed:
    """A stand-in distribution, as FastEstimator's tests put on MixUpBatch/CutMixBatch."""

    def __init__(self, value: float) -> None:
        self.value = value

    def sample(self) -> tf.Tensor:
        return tf.constant([self.value])


@pytest.mark.parametrize("traced", [False, True])
def test_mixup_and_cutmix_sample_from_their_distribution_attributes(traced: bool) -> None:
    from fe_core.op.tensorop import CutMixBatch, MixUpBatch  # pylint: disable=import-outside-toplevel
    images = tf.concat([tf.ones((1, 32, 32, 3)), tf.zeros((1, 32, 32, 3))], axis=0)
    labels = tf.concat([tf.ones((1, 10)), tf.zeros((1, 10))], axis=0)
    cutmix = CutMixBatch(inputs=["x", "y"], outputs=["x", "y"])
    cutmix.beta, cutmix.uniform = _Fixed(0.5), _Fixed(0.25)
    run = tf.function(cutmix.forward) if traced else cutmix.forward
    mixed, mixed_labels = run([images, labels], {})
    mixed = mixed.numpy()
    assert mixed[0, :19, :19].mean() == 0.0 and mixed[0, 19:].mean() == 1.0  # the box [0, 19) x [0, 19)
    np.testing.assert_allclose(mixed_labels[:, 0].numpy(), [1 - 361 / 1024, 361 / 1024], rtol=1e-6)
    mixup = MixUpBatch(inputs=["x", "y"], outputs=["x", "y"])
    mixup.beta = _Fixed(0.75)
    mixed, mixed_labels = (tf.function(mixup.forward) if traced else mixup.forward)([images, labels], {})
    assert mixed.numpy()[:, 0, 0, 0].tolist() == [0.75, 0.25] and mixed_labels.numpy()[:, 0].tolist() == [0.75, 0.25]


@pytest.mark.parametrize("eager", [True, False])
def test_resize3d_takes_one_tensor_or_a_list(eager: bool) -> None:
    from fe_core.op.tensorop import Resize3D  # pylint: disable=import-outside-toplevel
    volume = tf.reshape(tf.range(8, dtype=tf.float32), (1, 2, 2, 2, 1))
    single = Resize3D(inputs="x", outputs="x", output_shape=[4, 4, 4]).forward(volume, {})
    assert tf.is_tensor(single) and tuple(single.shape) == (1, 4, 4, 4, 1)
    pair = Resize3D(inputs=["x", "y"], outputs=["x", "y"], output_shape=(1, 1, 1), resize_mode="area")
    assert [float(tf.reshape(value, ())) for value in pair.forward([volume, volume], {})] == [3.5, 3.5]
    result = _run([Resize3D(inputs="x", outputs="y", output_shape=[1, 1, 1], resize_mode="area")],
                  {"x": np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2, 1)}, eager=eager)
    assert float(result["y"].reshape(())) == 3.5
