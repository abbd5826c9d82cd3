"""User mistakes on PyTorch fail in the Estimator's warmup, before any training step, with a message naming the op,
the key or model, mode, epoch and ds_id, and what was expected: labels out of range for CrossEntropy, a model fed the
wrong width or channels-last images, MSE on class labels, an UpdateOp whose model the loss does not depend on."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop.univariate import ExpandDims
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_torch.architecture import LeNet
from torch_helpers import requires_gpu


class StartRecorder(Trace):
    """Records whether training began (on_begin runs after the warmup)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: List[str] = []

    def on_begin(self, data: Data) -> None:
        self.events.append("begin")


def mlp(width: int = 4, classes: int = 10) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(width, 8), torch.nn.ReLU(), torch.nn.Linear(8, classes))


def data(width: int = 4, labels: Any = None, n: int = 8) -> NumpyDataset:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, size=n) if labels is None else np.asarray(labels)
    return NumpyDataset({"x": rng.random((n, width)).astype(np.float32), "y": y})


def weights(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    return {name: value.detach().clone() for name, value in model.state_dict().items()}


def fit_fails(ops: List[Any], train: Any, pipeline_ops: Any = None, eval_data: Any = None) -> StartRecorder:
    """Fit, expecting an error; the recorder shows training never began."""
    recorder = StartRecorder()
    pipeline = Pipeline(train_data=train, eval_data=eval_data, batch_size=4, ops=pipeline_ops)
    estimator = Estimator(pipeline, make_network(ops), epochs=2, log_steps=None, traces=recorder)
    fit_fails.recorder = recorder  # type: ignore[attr-defined]
    estimator.fit()
    return recorder


def assert_not_trained(model: torch.nn.Module, before: Dict[str, torch.Tensor]) -> None:
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name]), name
    assert fit_fails.recorder.events == []  # type: ignore[attr-defined]


def classifier_ops(model: Any, loss: Any = None) -> List[Any]:
    return [ModelOp(model=model, inputs="x", outputs="y_pred"),
            loss or CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
            UpdateOp(model=model, loss_name="ce" if loss is None else loss.outputs[0])]


def test_label_equal_to_class_count_fails_in_warmup() -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(model), data(labels=[1, 2, 3, 10, 4, 5, 6, 7]))
    message = str(info.value)
    assert "CrossEntropy (inputs ['y_pred', 'y']) got label 10 in 'y'" in message
    assert "for 10 classes" in message and "mode 'train', epoch 1, ds_id ''" in message
    assert "sparse labels must lie in 0..9" in message and "count from 1" in message
    assert_not_trained(model, before)


def test_negative_label_in_eval_fails_naming_eval() -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    with pytest.raises(ValueError, match=r"got label -1 in 'y' .* in mode 'eval', epoch 1, ds_id 'ev'"):
        fit_fails(classifier_ops(model), data(), eval_data={"ev": data(labels=[0, -1, 2, 3, 4, 5, 6, 7])})
    assert_not_trained(model, before)


def test_wrong_input_width_names_model_op_shapes_and_expected_input() -> None:
    model = build(lambda: mlp(width=5), "adam", model_name="wide")
    before = weights(model)
    with pytest.raises(RuntimeError) as info:
        fit_fails(classifier_ops(model), data(width=4))
    message = str(info.value)
    assert message.startswith("ModelOp (model 'wide', inputs ['x'], outputs ['y_pred']) failed in mode 'train', "
                              "epoch 1, ds_id '' on inputs 'x' shape (4, 4) float32")
    assert "mat1 and mat2" in message
    assert "expects inputs of shape (N, ..., 5), but the input's last axis has 4 values" in message
    assert isinstance(info.value.__cause__, RuntimeError) and "mat1 and mat2" in str(info.value.__cause__)
    assert_not_trained(model, before)


def test_channels_last_images_to_lenet_say_to_put_channels_first() -> None:
    model = build(lambda: LeNet(), "adam", model_name="lenet")
    before = weights(model)
    images = NumpyDataset({"x": np.zeros((8, 28, 28), dtype=np.float32), "y": np.arange(8)})
    with pytest.raises(RuntimeError) as info:
        fit_fails(classifier_ops(model, CrossEntropy(inputs=("y_pred", "y"), outputs="ce")), images,
                  pipeline_ops=[ExpandDims(inputs="x", outputs="x", axis=-1)])
    message = str(info.value)
    assert "ModelOp (model 'lenet', inputs ['x'], outputs ['y_pred']) failed in mode 'train', epoch 1" in message
    assert "'x' shape (4, 28, 28, 1) float32" in message
    assert "expects inputs of shape (N, 1, H, W)" in message and "looks channels-last" in message
    assert "ExpandDims(axis=0)" in message
    assert info.value.__cause__ is not None
    assert_not_trained(model, before)


def test_mse_on_class_labels_suggests_cross_entropy() -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    before = weights(model)
    with pytest.raises(ValueError) as info:
        fit_fails(classifier_ops(model, MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")), data())
    message = str(info.value)
    assert "MeanSquaredError (inputs ['y_pred', 'y'])" in message
    assert "'y_pred' (shape (4, 10) float32)" in message and "'y' (shape (4,) int64)" in message
    assert "mode 'train', epoch 1, ds_id ''" in message and "use CrossEntropy(inputs=('y_pred', 'y'))" in message
    assert_not_trained(model, before)


def test_update_of_a_model_the_loss_does_not_depend_on_fails() -> None:
    used = build(lambda: mlp(), "adam", model_name="used")
    unused = build(lambda: mlp(), "adam", model_name="unused")
    before_used, before_unused = weights(used), weights(unused)
    ops = classifier_ops(used) + [UpdateOp(model=unused, loss_name="ce")]
    with pytest.raises(ValueError) as info:
        fit_fails(ops, data())
    message = str(info.value)
    assert "UpdateOp (model 'unused', loss 'ce') in mode 'train', epoch 1, ds_id ''" in message
    assert "no gradient of 'ce' reaches any of model 'unused'" in message and "never change" in message
    assert_not_trained(used, before_used)
    assert_not_trained(unused, before_unused)


def test_gan_style_updates_pass_the_check() -> None:
    """A generator loss flowing through a discriminator reaches both: no error, and training runs."""
    gen = build(lambda: torch.nn.Linear(4, 4), "adam", model_name="gen")
    disc = build(lambda: mlp(), "adam", model_name="disc")
    ops = [ModelOp(model=gen, inputs="x", outputs="fake"),
           ModelOp(model=disc, inputs="fake", outputs="y_pred"),
           CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
           UpdateOp(model=gen, loss_name="ce"),
           UpdateOp(model=disc, loss_name="ce")]
    before = weights(gen)
    recorder = StartRecorder()
    Estimator(Pipeline(train_data=data(), batch_size=4), make_network(ops), epochs=1, log_steps=None,
              traces=recorder).fit()
    assert recorder.events == ["begin"]
    assert not torch.equal(gen.state_dict()["weight"], before["weight"])


def test_missing_label_key_lists_pipeline_and_network_keys() -> None:
    model = build(lambda: mlp(), "adam", model_name="clf")
    ops = classifier_ops(model, CrossEntropy(inputs=("y_pred", "label"), outputs="ce"))
    with pytest.raises(KeyError) as info:
        fit_fails(ops, data())
    message = info.value.args[0]
    assert "pipeline ['x', 'y'], earlier network ops ['y_pred']" in message and "Did you mean 'y'?" in message


class CountingIdentity(torch.autograd.Function):
    """Identity whose backward counts its calls (how many backward passes went through the model)."""

    backward_calls = 0

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:  # pylint: disable=arguments-differ
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:  # pylint: disable=arguments-differ
        CountingIdentity.backward_calls += 1
        return grad


class Counted(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = torch.nn.Linear(4, 8), torch.nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.relu(CountingIdentity.apply(self.first(x))))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_gpu)])
def test_the_update_check_runs_no_backward_pass(device: str) -> None:
    """Warmup finds the loss's path to the weights in the recorded graph: the only backward passes of a fit are the
    training steps' own (a hand-written loop's first step is fe's first backward too)."""
    model = build(Counted, "adam", model_name="counted")
    assert next(model.parameters()).device.type == device
    CountingIdentity.backward_calls = 0
    Estimator(Pipeline(train_data=data(), batch_size=4), make_network(classifier_ops(model)), epochs=1,
              log_steps=None, train_steps_per_epoch=1).fit(warmup=True)
    assert CountingIdentity.backward_calls == 1


class Checkpointed(torch.nn.Module):
    """The weights run inside an activation checkpoint (recomputed in the backward pass)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch.utils.checkpoint import checkpoint  # pylint: disable=import-outside-toplevel
        return checkpoint(self.body, x, use_reentrant=False)


def test_the_update_check_sees_weights_inside_an_activation_checkpoint() -> None:
    model = build(Checkpointed, "adam", model_name="ckpt")
    before = weights(model)
    recorder = StartRecorder()
    Estimator(Pipeline(train_data=data(), batch_size=4), make_network(classifier_ops(model)), epochs=1,
              log_steps=None, traces=recorder).fit()
    assert recorder.events == ["begin"]
    assert all(not torch.equal(value, before[name]) for name, value in model.state_dict().items())
