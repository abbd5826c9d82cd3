"""FastEstimator semantics, part 3 (issue 36) on torch: loader batches and a user Trace's `data` hold torch tensors,
a DataLoader given as data comes back unchanged, `fe.types` works with isinstance, SuperLoss exposes its state and
CalibrationError / ReduceLROnPlateau / BestModelSaver behave as FastEstimator's with torch values."""
from __future__ import annotations

import sys
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.metric import Accuracy
from fe_core.trace.trace import Trace
from fe_core.types import Array, DataSequence, Model, Tensor
from semantics3_helpers import PerDSReader, calibration_error_in_two_batches


def _arrays(n: int, seed: int) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(n, 4)).astype(np.float32), "y": (np.arange(n) % 2).astype(np.int64)}


class Reader(Trace):
    """A FastEstimator-style user trace: calls `.numpy()` on what it reads."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(inputs=("x", "y", "y_pred", "ce"), outputs="pred_mean", **kwargs)
        self.seen: List[Any] = []

    def on_batch_begin(self, data: Data) -> None:
        if "x" in data:
            self.seen.append(("begin", type(data["x"])))

    def on_batch_end(self, data: Data) -> None:
        self.seen.append(("end", type(data["y_pred"]), data["y_pred"].numpy().shape, type(data["y"]),
                          data["y_pred"].device.type, type(data["ce"])))
        data.write_with_log("pred_mean", float(data["y_pred"].numpy().mean()))


@pytest.fixture(scope="module")
def fitted() -> Dict[str, Any]:
    """One short run (train + two eval datasets) shared by the tests below."""
    torch.manual_seed(0)
    model = build(lambda: torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(dim=-1)), "adam")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                            UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=NumpyDataset(_arrays(16, 0)),
                        eval_data={"a": NumpyDataset(_arrays(8, 1)), "b": NumpyDataset(_arrays(4, 2))}, batch_size=4)
    reader, per_ds_reader, accuracy = Reader(), PerDSReader(), Accuracy(true_key="y", pred_key="y_pred")
    summary = Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=1,
                        traces=[reader, per_ds_reader, accuracy]).fit("run")
    return {"summary": summary, "reader": reader, "pipeline": pipeline}


# ------------------------------------------------------------------------------------------------ item 1
def test_a_user_trace_reads_torch_tensors(fitted: Dict[str, Any]) -> None:
    seen = fitted["reader"].seen
    assert ("begin", torch.Tensor) in seen
    ends = [entry for entry in seen if entry[0] == "end"]
    assert len(ends) == 4 + 2 + 1  # 4 train steps, then eval datasets a (2 steps) and b (1 step)
    assert {entry[1:] for entry in ends} == {(torch.Tensor, (4, 2), torch.Tensor, "cpu", torch.Tensor)}
    history = fitted["summary"].history
    assert len(history["train"]["pred_mean"]) == 4  # what the user trace logged reached the Summary


def test_fe_traces_and_a_per_ds_user_trace_in_the_same_run(fitted: Dict[str, Any]) -> None:
    history = fitted["summary"].history["eval"]
    assert list(history["rows|a"].values()) == [8] and list(history["rows|b"].values()) == [4]
    assert list(history["rows"].values()) == [12]
    assert 0.0 <= float(list(history["accuracy"].values())[0]) <= 1.0


def test_hand_iterated_loader_yields_torch_tensors(fitted: Dict[str, Any]) -> None:
    pipeline = fitted["pipeline"]
    with pipeline(mode="train", shuffle=False) as loader:
        assert len(loader) == 4
        batches = [batch for batch in loader]
    assert all(isinstance(batch["x"], torch.Tensor) for batch in batches)
    np.testing.assert_array_equal(np.concatenate([batch["x"].numpy() for batch in batches]), _arrays(16, 0)["x"])
    assert batches[0]["y"].dtype == torch.int64
    with pipeline as loader:  # the last call's settings
        assert isinstance(next(iter(loader))["x"], torch.Tensor)
    assert isinstance(next(iter(pipeline.get_loader("eval", ds_id="a")))["x"], torch.Tensor)


def test_a_dataloader_given_as_data_comes_back_unchanged() -> None:
    dataloader = torch.utils.data.DataLoader([{"x": torch.ones(2), "y": torch.tensor(1)}] * 6, batch_size=3)
    pipeline = Pipeline(train_data=dataloader, eval_data=dataloader)
    with pipeline(mode="train") as loader:
        assert loader is dataloader
    with pipeline(mode="eval", epoch=2) as loader:
        assert loader is dataloader
    with pipeline as loader:
        assert loader is dataloader
        assert [batch["x"].shape[0] for batch in loader] == [3, 3]


# ------------------------------------------------------------------------------------------------ item 2
def test_fe_types_isinstance_on_torch_values() -> None:
    assert isinstance(torch.ones(1), Tensor) and isinstance(torch.ones(1), Array)
    assert isinstance(torch.nn.Parameter(torch.ones(1)), Tensor) and issubclass(torch.Tensor, Tensor)
    assert isinstance(torch.nn.Linear(1, 1), Model) and not isinstance(torch.ones(1), Model)
    assert isinstance(torch.ones(2), DataSequence) and not isinstance(np.zeros(1), Tensor)
    assert isinstance(torch.ones(1), (int, Tensor))
    assert "tensorflow" not in sys.modules  # checking types imported no other framework


# ------------------------------------------------------------------------------------------------ items 7 and 9
def test_calibration_error_on_torch_tensors_is_rounded_to_four_digits() -> None:
    preds = torch.tensor([[1.0, 0.0]] * 50 + [[0.5, 0.5]] * 50)
    labels = torch.tensor([0] * 50 + [1] * 50)
    error, end = calibration_error_in_two_batches(labels, preds)
    assert len(error.y_true) == 100 and len(error.y_pred) == 100
    assert end["calibration_error"] == 0.3536


def test_super_loss_exposes_initialized_and_tau() -> None:
    from fe_core.op.tensorop.regularized_losses import SuperLoss  # pylint: disable=import-outside-toplevel
    loss = SuperLoss(CrossEntropy(inputs=("y_pred", "y"), outputs="ce"))
    assert loss.initialized == {} and loss.tau == {}
    loss.build("torch", torch.device("cpu"))
    assert loss.initialized["train"] in (False, 0) and float(loss.tau["train"]) == 0.0
    y_pred = torch.tensor([[0.9, 0.1], [0.2, 0.8]])
    loss.forward([y_pred, torch.tensor([0, 0])], {"mode": "train", "warmup": False})
    assert bool(loss.initialized["train"]) and isinstance(loss.tau["train"], torch.Tensor)
    assert float(loss.tau["train"]) > 0.0 and not bool(loss.initialized["eval"])


def test_reduce_lr_on_plateau_prints_the_float32_rate(capsys: pytest.CaptureFixture) -> None:
    from fe_core.trace.adapt import ReduceLROnPlateau  # pylint: disable=import-outside-toplevel
    model = build(lambda: torch.nn.Linear(2, 1), lambda params: torch.optim.SGD(params, lr=0.001))
    reducer = ReduceLROnPlateau(model, metric="loss", patience=1, factor=0.1)
    reducer.on_epoch_end(Data({"loss": 1.0}))
    end = Data({"loss": 2.0})
    reducer.on_epoch_end(end)
    # FastEstimator's message: the product 0.1 * 0.001 in float32, formatted as numpy formats a float32
    expected = np.float32(0.1 * 0.001)
    assert capsys.readouterr().out == f"FastEstimator-ReduceLROnPlateau: learning rate reduced to {expected}\n"
    logged = end.read_logs()["model_lr"]
    assert isinstance(logged, np.float32) and logged == expected


def test_accuracy_with_negative_torch_labels_without_a_system() -> None:
    accuracy = Accuracy(true_key="y", pred_key="y_pred")
    accuracy.on_epoch_begin(Data())
    y_pred = torch.tensor([[0.8], [0.3], [0.4], [0.2]])
    accuracy.on_batch_end(Data({"y": torch.tensor([1, -1, 0, 1]), "y_pred": y_pred}))
    end = Data()
    accuracy.on_epoch_end(end)
    assert float(end["accuracy"]) == 0.5
