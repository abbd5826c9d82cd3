"""FastEstimator's documented trace behaviour that needs no framework (issue 28): metric traces driven directly
without a System, the trace state FastEstimator exposes, metric arguments."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.trace.metric import (MCC, Accuracy, AUCScore, BleuScore, CalibrationError, ConfusionMatrix, Dice,
                                  F1Score, Precision, Recall)
from fe_core.trace.trace import current_ds_id

Y_TRUE = np.array([0, 1, 1, 0])
Y_PRED = np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.6, 0.4]])


def drive(trace: Any, *batches: Dict[str, Any]) -> Dict[str, Any]:
    """Run a trace's epoch hooks by hand, as FastEstimator users do in their unit tests; return what it logged."""
    trace.on_epoch_begin(Data())
    for batch in batches:
        trace.on_batch_end(Data(batch))
    data = Data()
    trace.on_epoch_end(data)
    return dict(data.read_logs())


# ------------------------------------------------------------------------------------------------ item 3
@pytest.mark.parametrize("trace, expected", [
    (Accuracy(true_key="y", pred_key="p"), {"accuracy": 1.0}),
    (AUCScore(true_key="y", pred_key="p"), {"auc": 1.0}),
    (MCC(true_key="y", pred_key="p"), {"mcc": 1.0}),
])
def test_metrics_run_without_a_system(trace: Any, expected: Dict[str, float]) -> None:
    assert current_ds_id(trace) == ""  # no System yet: the unnamed dataset
    logs = drive(trace, {"y": Y_TRUE, "p": Y_PRED})
    assert {key: float(value) for key, value in logs.items()} == pytest.approx(expected)


def test_class_score_bleu_dice_and_confusion_metrics_run_without_a_system() -> None:
    for trace in (F1Score(true_key="y", pred_key="p"), Precision(true_key="y", pred_key="p"),
                  Recall(true_key="y", pred_key="p")):
        assert np.asarray(next(iter(drive(trace, {"y": Y_TRUE, "p": Y_PRED}).values()))).tolist() == [1.0, 1.0]
    matrix = drive(ConfusionMatrix(true_key="y", pred_key="p", num_classes=2), {"y": Y_TRUE, "p": Y_PRED})
    assert np.asarray(matrix["confusion_matrix"]).tolist() == [[2, 0], [0, 2]]
    bleu = drive(BleuScore(true_key="y", pred_key="p", output_name="bleu"),
                 {"y": np.array([[[1, 2, 3, 4, 5]]]), "p": np.array([[1, 2, 3, 4, 5]])})
    assert float(bleu["bleu"]) == pytest.approx(1.0)
    dice = drive(Dice(true_key="y", pred_key="p"), {"y": np.ones((2, 4, 4, 1)), "p": np.ones((2, 4, 4, 1))})
    assert float(dice["Dice"]) == pytest.approx(1.0)
    calibration = drive(CalibrationError(true_key="y", pred_key="p"), {"y": Y_TRUE, "p": Y_PRED})
    assert "calibration_error" in calibration


# ------------------------------------------------------------------------------------------------ item 4
def test_eval_and_test_essential_expose_their_results() -> None:
    from fe_core.trace.essential import EvalEssential, TestEssential  # pylint: disable=import-outside-toplevel
    for trace, name in ((EvalEssential(monitor_names="loss"), "eval_results"),
                        (TestEssential(monitor_names="loss"), "test_results")):
        trace.on_epoch_begin(Data({"loss": 10}))
        assert not getattr(trace, name)  # FastEstimator's empty {key: {ds_id: [values]}}
        trace.on_batch_end(Data({"loss": 5}))
        assert getattr(trace, name)["loss"][""] == [5]
        setattr(trace, name, {"loss": [95]})
        trace.on_batch_end(Data({"loss": 10}))
        assert getattr(trace, name)["loss"][""] == [95, 10]
        setattr(trace, name, {"loss": [10, 20]})
        end = Data()
        trace.on_epoch_end(end)
        assert float(end["loss"]) == 15.0


def test_train_essential_exposes_its_timers() -> None:
    from time import perf_counter  # pylint: disable=import-outside-toplevel

    from fe_core.trace.essential import TrainEssential  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    trace = TrainEssential(monitor_names="loss")
    system = make_system(trace, mode="train")
    system.log_steps, system.global_step = 5, 10
    trace.epoch_start = perf_counter() - 500
    trace.step_start = perf_counter() - 300
    data = Data({"loss": 10})
    trace.on_batch_end(data)
    assert trace.elapse_times == [] and data["steps/sec"] is not None
    trace.on_epoch_end(data)
    assert len(trace.elapse_times) == 1 and trace.elapse_times[0] > 0 and data["epoch_time(sec)"] >= 500


def test_search_keeps_fastestimators_search_idx(tmp_path: Any) -> None:
    from fe_core.search import GridSearch  # pylint: disable=import-outside-toplevel
    search = GridSearch(eval_fn=lambda search_idx, a, b: a + b, params={"a": [1, 2, 3], "b": [4, 5, 6]})
    assert search.search_idx == 0
    search.fit(save_dir=str(tmp_path))
    assert search.search_idx == 9
    again = GridSearch(eval_fn=lambda search_idx, a, b: a + b, params={"a": [1, 2, 3], "b": [4, 5, 6]})
    again.load(str(tmp_path))
    assert again.search_idx == 9
    with pytest.raises(ValueError, match="No saved search"):  # FastEstimator raises ValueError here
        again.load(str(tmp_path / "elsewhere"))


def test_instance_and_label_trackers_key_by_raw_values() -> None:
    from fe_core.trace.xai import InstanceTracker, LabelTracker  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    instances = InstanceTracker(index="idx", metric="ce", n_max_to_keep=1, n_min_to_keep=1, mode="train")
    labels = LabelTracker(label="y", metric="ce", bounds=["std", "range", None], mode="train")
    for trace in (instances, labels):
        system = make_system(trace, mode="train")
        for epoch, ce in ((1, [0.9, 0.1, 0.5, 0.4]), (2, [0.8, 0.2, 0.4, 0.6])):
            system.epoch_idx, system.global_step = epoch, epoch * 3
            trace.on_epoch_begin(Data())
            trace.on_batch_end(Data({"idx": np.array([0, 1, 2, 3]), "y": np.array([1, 0, 1, 0]),
                                     "ce": np.array(ce)}))
            trace.on_epoch_end(Data())
        trace.on_end(Data())
    history = instances.index_history
    assert history["train"][0] == [(3, 0.9), (6, 0.8)] and isinstance(next(iter(history["train"])), int)
    summaries = labels.label_summaries
    assert sorted(summaries) == [0, 1] and all(isinstance(key, int) for key in summaries)
    keys = set(summaries[1].history["train"])
    assert keys == {"ce", "ce ($\\mu \\pm \\sigma$)", "ce ($min, \\mu, max$)"}
    assert summaries[1].history["train"]["ce"][6] == pytest.approx(0.6)
    assert summaries[1].history["train"]["ce ($\\mu \\pm \\sigma$)"][3].y_max == pytest.approx(
        0.7 + np.std([0.9, 0.5], ddof=1))


def test_csv_logger_instance_rows_carry_every_requested_key(tmp_path: Any) -> None:
    import csv  # pylint: disable=import-outside-toplevel

    from fe_core.trace.io import CSVLogger  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    path = tmp_path / "log.csv"
    trace = CSVLogger(str(path), monitor_names=["sample_ce", "ce", "absent"], instance_id_key="id")
    make_system(trace)
    trace.on_begin(Data())
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data({"id": np.array([7, 8]), "sample_ce": np.array([0.1, 0.2]), "ce": np.float32(0.15)}))
    trace.on_epoch_end(Data())
    with open(path, newline="", encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if row["instance_id"]]
    assert [(row["instance_id"], row["sample_ce"], row["ce"], row["absent"]) for row in rows] == [
        ("7", "0.1", "0.15", ""), ("8", "0.2", "0.15", "")]


def test_calibration_traces_take_fastestimators_per_sample_lists() -> None:
    from fe_core.trace.adapt import PBMCalibrator  # pylint: disable=import-outside-toplevel
    perfect = np.array([1.0, 0.0] * 25 + [0.5, 0.5] * 50 + [0.0, 1.0] * 25).reshape(100, 2)
    imperfect = np.array([1.0, 0.0] * 50 + [0.5, 0.5] * 50).reshape(100, 2)
    labels = [0] * 50 + [1] * 50
    error = CalibrationError(true_key="y", pred_key="y_pred")
    error.on_epoch_begin(Data())
    assert error.y_true == [] and error.y_pred == []
    for y_pred, expected in ((perfect, 0.0), (imperfect, 0.3536)):
        error.y_true, error.y_pred = labels, list(y_pred)
        end = Data()
        error.on_epoch_end(end)
        assert round(float(end["calibration_error"]), 4) == expected
    error.on_epoch_begin(Data())
    for label, row in zip(labels, perfect):  # 0-d labels: batches of one sample
        error.on_batch_end(Data({"y": np.array(label), "y_pred": row}))
    assert len(error.y_true) == 100
    end = Data()
    error.on_epoch_end(end)
    assert float(end["calibration_error"]) == 0.0
    calibrator = PBMCalibrator(true_key="y", pred_key="y_pred")
    calibrator.on_epoch_begin(Data())
    calibrator.on_batch_end(Data({"y": np.array([0, 1]), "y_pred": np.array([[1.0, 0.0], [0.0, 1.0]])}))
    calibrator.on_batch_end(Data({"y": np.array(1), "y_pred": np.array([0.0, 1.0])}))
    assert [int(v) for v in calibrator.y_true] == [0, 1, 1] and len(calibrator.y_pred) == 3
    calibrator.y_true = [0] * 50 + [1] * 50
    calibrator.y_pred = list(np.array([1.0, 0.0] * 50 + [0.0, 1.0] * 50).reshape(100, 2))
    end = Data()
    calibrator.on_epoch_end(end)
    assert np.allclose(end["y_pred_calibrated"], np.array([1.0, 0.0] * 50 + [0.0, 1.0] * 50).reshape(100, 2))


def test_early_stopping_compares_with_its_monitor_op(capsys: Any) -> None:
    from fe_core.trace.adapt import EarlyStopping  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    stopper = EarlyStopping(baseline=5.0)
    make_system(stopper)
    assert stopper.monitor_op is np.less and stopper.min_delta == 0.0
    stopper.min_delta = 1
    stopper.monitor_op = np.greater
    stopper.best = 7
    stopper.on_epoch_end(Data({"loss": 10}))
    assert (stopper.wait, stopper.best) == (0, 10)  # 10 - 1 > 7: an improvement under the replaced comparison
    stopper = EarlyStopping(baseline=5.0)
    system = make_system(stopper)
    system.epoch_idx, stopper.best = 3, 2
    stopper.on_epoch_end(Data({"loss": 10}))
    assert capsys.readouterr().out.strip() == ("FastEstimator-EarlyStopping: 'loss' triggered an early stop. Its best "
                                               "value was 2 at epoch 2")
