"""Torch tensors at fe's public boundary, as FastEstimator hands them out: Pipeline.get_results, Network.transform
(which steps the model in 'train' mode), slicers called directly and user Slicers written with torch ops, and keys no
slicer un-slices (passed through or dropped, with one warning)."""
from __future__ import annotations

import warnings
from typing import Any, List, Tuple

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.slicer import AxisSlicer, MeanUnslicer, Slicer, SlidingSlicer, forward_slicers, reverse_slicers


def data(n: int = 8) -> dict:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return {"x": x, "y": x.sum(axis=1, keepdims=True), "name": np.array([f"s{i}" for i in range(n)])}


def regression_network(slicers: Any = None) -> Tuple[Any, Any]:
    model = build(model_fn=lambda: torch.nn.Linear(3, 1), optimizer_fn=lambda p: torch.optim.SGD(p, lr=0.1))
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")], slicers=slicers)
    return model, network


# ------------------------------------------------------------------------------------------------ get_results
def test_get_results_returns_cpu_torch_tensors() -> None:
    pipeline = Pipeline(train_data=NumpyDataset(data()), batch_size=4)
    batch = pipeline.get_results()
    assert isinstance(batch["x"], torch.Tensor) and batch["x"].device.type == "cpu"
    np.testing.assert_array_equal(batch["x"].numpy(), data()["x"][:4])  # FastEstimator users call .numpy()
    assert batch["y"].dtype == torch.float32
    assert list(batch["name"]) == ["s0", "s1", "s2", "s3"]  # strings stay strings
    several = pipeline.get_results(num_steps=2)
    assert isinstance(several, list) and all(isinstance(b["x"], torch.Tensor) for b in several)


def test_get_results_of_a_dataloader_returns_its_own_batches() -> None:
    loader = torch.utils.data.DataLoader([{"x": torch.full((2,), float(i))} for i in range(6)], batch_size=3)
    batches = Pipeline(train_data=loader).get_results(num_steps=5)
    assert len(batches) == 2 and all(isinstance(b["x"], torch.Tensor) for b in batches)
    assert batches[1]["x"][:, 0].tolist() == [3.0, 4.0, 5.0]


# ------------------------------------------------------------------------------------------------ transform
def test_transform_returns_torch_tensors_and_takes_them() -> None:
    model, network = regression_network()
    result = network.transform(data(), mode="eval")
    assert isinstance(result["y_pred"], torch.Tensor) and result["y_pred"].device.type == "cpu"
    assert isinstance(result["x"], torch.Tensor) and isinstance(result["mse"], torch.Tensor)
    expected = model(torch.from_numpy(data()["x"])).detach()
    np.testing.assert_allclose(result["y_pred"].numpy(), expected.numpy(), rtol=1e-6)
    batch = Pipeline(eval_data=NumpyDataset(data()), batch_size=8).get_results(mode="eval")
    again = network.transform(batch, mode="eval")  # get_results' tensors go straight into transform
    np.testing.assert_allclose(again["y_pred"].numpy(), expected.numpy(), rtol=1e-6)
    pipeline_results = network.transform(Pipeline(eval_data=NumpyDataset(data()), batch_size=4), mode="eval")
    assert [tuple(r["y_pred"].shape) for r in pipeline_results] == [(4, 1), (4, 1)]


def test_transform_in_train_mode_steps_the_model_and_other_modes_do_not() -> None:
    model, network = regression_network()
    before = [p.detach().clone() for p in model.parameters()]
    network.transform(data(), mode="eval")
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    losses = [float(network.transform(data(), mode="train")["mse"]) for _ in range(5)]
    assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert losses[-1] < losses[0]  # the UpdateOp ran: a manual training loop learns


# ------------------------------------------------------------------------------------------------ slicers
def test_builtin_slicers_return_the_torch_tensors_they_were_given() -> None:
    x = torch.arange(24.0).reshape(2, 3, 4)
    pieces = AxisSlicer(axis=1, slice="x")._slice_batch(x)  # pylint: disable=protected-access
    assert len(pieces) == 3 and all(isinstance(piece, torch.Tensor) for piece in pieces)
    fused = AxisSlicer(axis=1, slice="x")._unslice_batch(tuple(pieces), key="x")  # pylint: disable=protected-access
    assert isinstance(fused, torch.Tensor) and torch.equal(fused, x)
    sliding = SlidingSlicer(window_size=[-1, -1, 2], slice="x")
    windows = sliding.slice_batches((x,))
    assert all(isinstance(w[0], torch.Tensor) for w in windows)
    assert torch.equal(sliding.unslice_batches(tuple(w[0] for w in windows), key="x"), x)
    mean = MeanUnslicer("loss")._unslice_batch(  # pylint: disable=protected-access
        (torch.tensor(1.0), torch.tensor(3.0)), key="loss")
    assert isinstance(mean, torch.Tensor) and float(mean) == 2.0
    slicers = [AxisSlicer(axis=0, slice="x", minibatch_size=1), MeanUnslicer("loss")]
    minibatches = forward_slicers(slicers, {"x": x, "lr": 0.1})
    assert len(minibatches) == 2 and isinstance(minibatches[0]["x"], torch.Tensor)
    results = [dict(m, loss=m["x"].mean()) for m in minibatches]
    back = reverse_slicers(slicers, results, {"x": x, "lr": 0.1})
    assert isinstance(back["x"], torch.Tensor) and torch.equal(back["x"], x)
    assert isinstance(back["loss"], torch.Tensor) and back["lr"] == 0.1


class TorchHalves(Slicer):
    """A user's slicer written with torch ops, as FastEstimator users write them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: List[type] = []

    def _slice_batch(self, batch: torch.Tensor) -> List[torch.Tensor]:
        self.seen.append(type(batch))
        return list(torch.chunk(batch, 2, dim=0))

    def _unslice_batch(self, slices: Tuple[torch.Tensor, ...], key: str) -> torch.Tensor:
        self.seen.append(type(slices[0]))
        return torch.cat(slices, dim=0)


def test_a_user_slicer_with_torch_ops_runs_in_the_network() -> None:
    slicer = TorchHalves(slice=["x", "y"], unslice=["x", "y", "y_pred"])
    model, network = regression_network(slicers=[slicer, MeanUnslicer("mse")])
    result = network.transform(data(), mode="eval")
    assert set(slicer.seen) == {torch.Tensor}
    expected = model(torch.from_numpy(data()["x"])).detach()
    np.testing.assert_allclose(result["y_pred"].numpy(), expected.numpy(), rtol=1e-6)
    assert isinstance(result["mse"], torch.Tensor) and result["mse"].ndim == 0


def test_keys_no_slicer_unslices_pass_through_or_drop_with_one_warning() -> None:
    _, network = regression_network(slicers=[AxisSlicer(slice=["x", "y"], unslice=None, minibatch_size=4),
                                             MeanUnslicer("mse")])
    with pytest.warns(UserWarning, match=r"\['y_pred'\].*dropped"):
        result = network.transform(data(), mode="eval")
    assert "y_pred" not in result and "mse" in result
    np.testing.assert_array_equal(result["x"].numpy(), data()["x"])  # the sliced input comes back whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        network.transform(data(), mode="eval")  # warned once


def test_get_results_tensors_never_share_the_datasets_memory() -> None:
    x = np.zeros((4, 3), dtype=np.float32)
    batch = Pipeline(train_data=NumpyDataset({"x": x})).get_results()  # no batch size: single samples (views)
    batch["x"] += 1
    assert not x.any()
