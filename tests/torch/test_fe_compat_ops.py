"""Torch: FastEstimator's documented op behaviour (issue 28): loss ops driven directly, multi-output LossOps, meta
ops' return values, clip_by_value bounds."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, L1_Loss, LossOp, MeanSquaredError, ModelOp, TensorOp, UpdateOp

STATE: Dict[str, Any] = {"mode": "train", "warmup": False}


def _run(ops: List[TensorOp], batch: Dict[str, np.ndarray], mode: str = "train") -> Dict[str, Any]:
    network = make_network(ops=ops, default_backend="torch")
    with network(mode=mode, epoch=1):
        result = network.run_step(dict(batch))
    return {key: result[key] for key in result}


# ------------------------------------------------------------------------------------------------ item 1: losses
def test_loss_ops_take_any_inputs_when_built_and_run_directly() -> None:
    y_pred = torch.tensor([[0.1, 0.9], [0.7, 0.3]])
    y_true = torch.tensor([1, 0])
    ce = CrossEntropy(inputs="x", outputs="x", mode="test")  # one key: fine until the op joins a Network
    expected = -(np.log(0.9) + np.log(0.7)) / 2
    assert float(ce.forward(data=[y_pred, y_true], state={})) == pytest.approx(expected, rel=1e-5)
    mse = MeanSquaredError(inputs="x", outputs="x")
    assert float(mse.forward(data=[torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0])], state={})) == 2.0
    l1 = L1_Loss(inputs=None, outputs="x", average_loss=False)
    assert l1.forward(data=[torch.tensor([[1.0], [2.0]]), torch.tensor([[0.0], [4.0]])],
                      state={}).tolist() == [1.0, 2.0]


def test_a_built_in_loss_checks_its_keys_when_it_joins_a_network() -> None:
    with pytest.raises(ValueError, match=r"CrossEntropy needs inputs \(y_pred, y_true\)"):
        make_network(ops=[CrossEntropy(inputs="pred", outputs="ce")], default_backend="torch")
    with pytest.raises(ValueError, match="MeanSquaredError needs exactly one output key"):
        make_network(ops=[MeanSquaredError(inputs=("p", "t"), outputs=("a", "b"))], default_backend="torch")


class _ThreePartLoss(LossOp):
    """A detection-style loss writing three loss terms (a box, a confidence and a class loss)."""

    def forward(self, data: List[torch.Tensor], state: Dict[str, Any]) -> List[torch.Tensor]:
        y_pred, y_true = data
        error = (y_pred - y_true)**2
        return [error[:, 0].mean(), error[:, 1].mean(), error[:, 2].mean()]


class _Total(TensorOp):

    def forward(self, data: List[torch.Tensor], state: Dict[str, Any]) -> torch.Tensor:
        return data[0] + data[1] + data[2]


def test_a_loss_op_subclass_may_declare_several_outputs() -> None:
    model = build(model_fn=lambda: torch.nn.Linear(3, 3), optimizer_fn="sgd")
    ops = [ModelOp(model=model, inputs="x", outputs="pred"),
           _ThreePartLoss(inputs=("pred", "y"), outputs=("box", "conf", "cls")),
           _Total(inputs=("box", "conf", "cls"), outputs="loss"),
           UpdateOp(model=model, loss_name="loss")]
    batch = {"x": np.ones((4, 3), np.float32), "y": np.zeros((4, 3), np.float32)}
    result = _run(ops, batch)
    total = float(result["box"]) + float(result["conf"]) + float(result["cls"])
    assert float(result["loss"]) == pytest.approx(total, rel=1e-5)


# ------------------------------------------------------------------------------------------------ item 2: meta ops
def test_repeat_reads_only_keys_that_exist_before_it_runs() -> None:
    from fe_core.op.tensorop import LambdaOp, Repeat  # pylint: disable=import-outside-toplevel
    static = Repeat(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y"), repeat=2)
    dynamic = Repeat(LambdaOp(fn=lambda z: z * 2, inputs="z", outputs="z"),
                     repeat=lambda z, limit: z.max() < limit.max())
    assert static.inputs == ["x"] and dynamic.inputs == ["z", "limit"]
    produced = Repeat(LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="w"), repeat=lambda w: w.max() < 0)
    assert produced.inputs == ["x"]  # `w` is written by the op before the condition reads it
    result = _run([static, produced], {"x": np.ones((2, 1), np.float32)})
    assert result["y"].tolist() == [[2.0], [2.0]] and result["w"].tolist() == [[2.0], [2.0]]
    grown = _run([dynamic], {"z": np.ones((2, ), np.float32), "limit": np.full((2, ), 5.0, np.float32)})
    assert grown["z"].tolist() == [8.0, 8.0]


def test_one_of_returns_what_the_wrapped_op_returns() -> None:
    from fe_core.op.tensorop import LambdaOp, OneOf  # pylint: disable=import-outside-toplevel
    one_of = OneOf(LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x"),
                   LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x"))
    result = one_of.forward([torch.tensor([1.0, 2.0])], STATE)
    assert isinstance(result, torch.Tensor) and result.tolist() == [2.0, 3.0]  # not a one-element list
    pair = OneOf(LambdaOp(fn=lambda a, b: [b, a], inputs=("a", "b"), outputs=("a", "b")))
    swapped = pair.forward([torch.tensor(1.0), torch.tensor(2.0)], STATE)
    assert isinstance(swapped, list) and [float(v) for v in swapped] == [2.0, 1.0]
    assert _run([one_of], {"x": np.zeros((2, ), np.float32)})["x"].tolist() == [1.0, 1.0]


# ------------------------------------------------------------------------------------------------ item 6
def test_clip_by_value_mixes_numbers_and_tensors_as_bounds() -> None:
    from fe_core.backend import clip_by_value  # pylint: disable=import-outside-toplevel
    values = torch.tensor([-5.0, 4.0, 2.0, 0.0, 9.0])
    expected = [-2.0, 3.0, 2.0, 0.0, 3.0]
    assert clip_by_value(values, torch.tensor(-2.0), 3).tolist() == expected
    assert clip_by_value(values, -2, torch.tensor(3.0)).tolist() == expected
    assert clip_by_value(values, torch.zeros(5), 3).tolist() == [0.0, 3.0, 2.0, 0.0, 3.0]
    assert clip_by_value(values, None, torch.tensor(3.0)).tolist() == [-5.0, 3.0, 2.0, 0.0, 3.0]


def test_watch_returns_every_value_in_order() -> None:
    from fe_core.op.tensorop import Watch  # pylint: disable=import-outside-toplevel
    data = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    squared = data * data
    output = Watch(inputs="x").forward(data=[data, squared], state={"tape": None})
    assert [value.tolist() for value in output] == [[1.0, 2.0, 4.0], [1.0, 4.0, 16.0]]


class _Fixed:
    """A stand-in distribution, as FastEstimator's tests put on MixUpBatch/CutMixBatch."""

    def __init__(self, value: float) -> None:
        self.value = value

    def sample(self) -> torch.Tensor:
        return torch.tensor([self.value])


def test_mixup_and_cutmix_sample_from_their_distribution_attributes() -> None:
    from fe_core.op.tensorop import CutMixBatch, MixUpBatch  # pylint: disable=import-outside-toplevel
    images = torch.cat([torch.ones((1, 3, 32, 32)), torch.zeros((1, 3, 32, 32))])
    labels = torch.cat([torch.ones((1, 10)), torch.zeros((1, 10))])
    cutmix = CutMixBatch(inputs=["x", "y"], outputs=["x", "y"])
    assert cutmix.beta is None and cutmix.uniform is None
    cutmix.beta, cutmix.uniform = _Fixed(0.5), _Fixed(0.25)
    mixed, mixed_labels = cutmix.forward(data=[images, labels], state={})
    assert float(mixed[0, :, :19, :19].mean()) == 0.0 and float(mixed[0, :, 19:, :].mean()) == 1.0  # box [0, 19)
    np.testing.assert_allclose(mixed_labels[:, 0].numpy(), [1 - 361 / 1024, 361 / 1024], rtol=1e-6)
    mixup = MixUpBatch(inputs=["x", "y"], outputs=["x", "y"], shared_beta=True)
    mixup.beta = _Fixed(0.75)
    mixed, mixed_labels = mixup.forward(data=[images, labels], state={})
    assert mixed[:, 0, 0, 0].tolist() == [0.75, 0.25] and mixed_labels[:, 0].tolist() == [0.75, 0.25]
    fresh = MixUpBatch(inputs=["x", "y"], outputs=["x", "y"])
    fresh.forward(data=[images, labels], state={})
    assert isinstance(fresh.beta, torch.distributions.Beta)  # made when first used, from torch's generator


def test_resize3d_takes_one_tensor_or_a_list() -> None:
    from fe_core.op.tensorop import Resize3D  # pylint: disable=import-outside-toplevel
    volume = torch.arange(8, dtype=torch.float32).reshape(1, 1, 2, 2, 2)
    single = Resize3D(inputs="x", outputs="x", output_shape=[4, 4, 4]).forward(volume, {})
    assert isinstance(single, torch.Tensor) and single.shape == (1, 1, 4, 4, 4)
    pair = Resize3D(inputs=["x", "y"], outputs=["x", "y"], output_shape=(1, 1, 1), resize_mode="area")
    shrunk = pair.forward([volume, volume], {})
    assert [float(value.reshape(())) for value in shrunk] == [3.5, 3.5]
    assert torch.equal(single, torch.nn.functional.interpolate(volume, size=[4, 4, 4], mode="nearest"))
    result = _run([Resize3D(inputs="x", outputs="y", output_shape=[1, 1, 1], resize_mode="area")],
                  {"x": np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2)})
    assert float(result["y"].reshape(())) == 3.5
