"""Torch: FastEstimator's documented trace behaviour (issue 28): traces driven by hand without a System, on torch
tensors and torch models."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest
import torch

from fe_core.build import build
from fe_core.data import Data
from fe_core.trace.io import BestModelSaver
from fe_core.trace.metric import Accuracy, AUCScore


def drive(trace: Any, *batches: Dict[str, Any]) -> Dict[str, Any]:
    """Run a trace's epoch hooks by hand, as FastEstimator users do in their unit tests; return what it logged."""
    trace.on_epoch_begin(Data())
    for batch in batches:
        trace.on_batch_end(Data(batch))
    data = Data()
    trace.on_epoch_end(data)
    return dict(data.read_logs())


def test_metrics_take_torch_tensors_without_a_system() -> None:
    y_true, y_pred = torch.tensor([0, 1, 1, 0]), torch.tensor([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.6, 0.4]])
    assert float(drive(AUCScore(true_key="y", pred_key="p"), {"y": y_true, "p": y_pred})["auc"]) == 0.875
    assert float(drive(Accuracy(true_key="y", pred_key="p"), {"y": y_true, "p": y_pred})["accuracy"]) == 0.75


def test_best_model_saver_runs_without_a_system(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn="sgd")
    saver = BestModelSaver(model=model, save_dir=str(tmp_path), metric="acc", save_best_mode="max")
    saver.on_epoch_begin(Data())
    first = Data({"acc": 0.5})
    saver.on_epoch_end(first)
    assert dict(first.read_logs()) == {"since_best_acc": 0, "max_acc": 0.5}
    assert (tmp_path / "model_best_acc.pt").is_file()
    second = Data({"acc": 0.25})
    saver.on_epoch_end(second)
    assert dict(second.read_logs()) == {"since_best_acc": 1, "max_acc": 0.5}
    assert "Saved model to" in capsys.readouterr().out


def test_trackers_and_calibration_take_torch_tensors() -> None:
    from fe_core.summary.system import System  # pylint: disable=import-outside-toplevel
    from fe_core.trace.metric import CalibrationError  # pylint: disable=import-outside-toplevel
    from fe_core.trace.xai import InstanceTracker, LabelTracker  # pylint: disable=import-outside-toplevel
    instances = InstanceTracker(index="idx", metric="ce", n_max_to_keep=1, n_min_to_keep=0, mode="train")
    labels = LabelTracker(label="y", metric="ce", bounds=None, mode="train")
    for trace in (instances, labels):
        trace.system = System(network=None, pipeline=None, traces=[trace], mode="train", ds_id="")
        trace.system.epoch_idx, trace.system.global_step = 1, 4
        trace.on_epoch_begin(Data())
        trace.on_batch_end(Data({"idx": torch.tensor([3, 4]), "y": torch.tensor([1, 1]),
                                 "ce": torch.tensor([0.25, 0.75])}))
        trace.on_epoch_end(Data())
    assert dict(instances.index_history["train"]) == {3: [(4, 0.25)], 4: [(4, 0.75)]}
    assert list(labels.label_summaries) == [1]
    assert labels.label_summaries[1].history["train"]["ce"][4] == pytest.approx(0.5)
    error = CalibrationError(true_key="y", pred_key="p")
    logs = drive(error, {"y": torch.tensor(0), "p": torch.tensor([1.0, 0.0])},
                 {"y": torch.tensor([1]), "p": torch.tensor([[0.0, 1.0]])})
    assert float(logs["calibration_error"]) == 0.0
