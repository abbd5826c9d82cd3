"""Patterns of FastEstimator's application scripts that fe must run on torch (small equivalents written for fe)."""
from __future__ import annotations

from typing import Any, List

import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop.univariate import ChannelTranspose
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline


def _fit(pipeline: Pipeline, ops: List[Any], **kwargs: Any) -> Estimator:
    estimator = Estimator(pipeline, make_network(ops), epochs=1, log_steps=None, train_steps_per_epoch=2,
                          eval_steps_per_epoch=1, **kwargs)
    estimator.fit()
    return estimator


# ------------------------------------------------------------------ ModelOp with several inputs (siamese networks)
class Siamese(torch.nn.Module):
    """Takes its two images as one list argument, as FastEstimator's ModelOp(inputs=[...]) passes them."""

    def __init__(self) -> None:
        super().__init__()
        self.branch = torch.nn.Linear(4, 3)
        self.head = torch.nn.Linear(3, 1)
        self.calls: List[int] = []

    def forward(self, x: List[torch.Tensor]) -> torch.Tensor:
        self.calls.append(len(x))
        x_a, x_b = x
        return torch.sigmoid(self.head(torch.abs(self.branch(x_a) - self.branch(x_b))))


def test_model_op_with_a_list_of_inputs_calls_the_model_with_one_list_argument() -> None:
    siamese = Siamese()
    model = build(lambda: siamese, "adam", model_name="siamese")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x_a": rng.random((16, 4), dtype=np.float32), "x_b": rng.random((16, 4), dtype=np.float32),
                         "y": rng.integers(0, 2, (16, 1)).astype(np.float32)})
    _fit(Pipeline(train_data=data, eval_data=data, batch_size=4),
         [ModelOp(model=model, inputs=["x_a", "x_b"], outputs="y_pred"),
          CrossEntropy(inputs=("y_pred", "y"), outputs="loss", form="binary"),
          UpdateOp(model=model, loss_name="loss")])
    assert siamese.calls and set(siamese.calls) == {2}


def test_model_op_with_a_one_key_list_passes_a_one_element_list() -> None:
    seen: List[Any] = []

    class Listener(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.dense = torch.nn.Linear(4, 1)

        def forward(self, x: Any) -> torch.Tensor:
            seen.append(type(x))
            return self.dense(x[0])

    model = build(Listener, "sgd", model_name="listener")
    network = make_network([ModelOp(model=model, inputs=["x"], outputs="y")])
    network.transform({"x": np.ones((2, 4), dtype=np.float32)}, mode="infer")
    assert seen == [list]


# ------------------------------------------------------------------ batches torch reads as channels-first (ALOCC)
class FlattenHead(torch.nn.Module):
    """A convolution followed by `.view`, which fails on channels-last tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.dense = torch.nn.Linear(4 * 6 * 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv(x)
        assert out.is_contiguous(), "the convolution's output is not row-major"
        return self.dense(out.view(out.shape[0], -1))


def test_a_batch_channel_transposed_from_one_channel_reaches_the_model_row_major() -> None:
    model = build(FlattenHead, "adam", model_name="alocc_like")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x": rng.random((16, 8, 8, 1), dtype=np.float32),
                         "y": rng.random((16, 1), dtype=np.float32)})
    pipeline = Pipeline(train_data=data, eval_data=data, batch_size=4,
                        ops=[ChannelTranspose(inputs="x", outputs="x")])
    _fit(pipeline, [ModelOp(model=model, inputs="x", outputs="y_pred"),
                    MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                    UpdateOp(model=model, loss_name="mse")])


def test_strided_batches_become_row_major_tensors_without_copying_ordinary_ones() -> None:
    from fe_torch.devices import standard_layout, to_device
    ordinary = np.zeros((4, 3, 8, 8), dtype=np.float32)
    assert standard_layout(ordinary) is ordinary
    squeezed = np.ascontiguousarray(np.zeros((4, 8, 8, 1), dtype=np.float32).transpose(0, 3, 1, 2))
    fixed = standard_layout(squeezed)
    assert fixed.strides == (256, 256, 32, 4) and np.shares_memory(fixed, squeezed)  # no copy
    view = np.zeros((4, 8, 8, 3), dtype=np.float32).transpose(0, 3, 1, 2)
    tensor = to_device(view, torch.device("cpu"))
    assert tensor.stride() == (192, 64, 8, 1) and torch.equal(tensor, torch.from_numpy(view.copy()))


# ------------------------------------------------------------------ keys a later Delete removes (HRNet, line search)
def test_a_pipeline_key_deleted_after_use_or_unused_does_not_break_warmup() -> None:
    from fe_core.op.numpyop import Delete, LambdaOp
    model = build(lambda: torch.nn.Linear(2, 1), "adam", model_name="delete_pattern")
    rng = np.random.default_rng(0)
    data = NumpyDataset({"x": rng.random((16, 2), dtype=np.float32), "keypoint": rng.random((16, 2)),
                         "mask_left": rng.random((16, 3)), "y": rng.random((16, 1), dtype=np.float32)})
    pipeline = Pipeline(train_data=data, eval_data=data, batch_size=4,
                        ops=[LambdaOp(fn=lambda kp: kp.astype(np.float32), inputs="keypoint", outputs="heat"),
                             Delete(["keypoint", "mask_left"])])
    _fit(pipeline, [ModelOp(model=model, inputs="x", outputs="y_pred"),
                    MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                    UpdateOp(model=model, loss_name="mse")])
