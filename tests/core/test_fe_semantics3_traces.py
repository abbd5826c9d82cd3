"""FastEstimator semantics, part 3 (issue 36), numpy only: `fe.types` in isinstance checks, plot keys given as one
string, CalibrationError's value rounded to 4 digits and per-sample collection, and the state FastEstimator's traces
expose."""
from __future__ import annotations

import sys
import typing

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.summary.logs import parse_log_text
from fe_core.trace.essential import EvalEssential, TestEssential
from fe_core.trace.metric import CalibrationError
from fe_core.types import Array, DataSequence, Model, Tensor

LR_LOG = """\
FastEstimator-Train: step: 1; ce: 2.0; LeNet_lr: 0.001;
FastEstimator-Train: step: 10; ce: 1.0; LeNet_lr: 0.0005;
FastEstimator-Eval: step: 10; epoch: 1; ce: 0.8; accuracy: 0.7;
"""


# ------------------------------------------------------------------------------------------------ item 2
def test_types_work_in_isinstance_and_annotations_without_a_framework() -> None:
    # other tests in this process may leave framework stand-ins in sys.modules: only what these checks add counts
    frameworks_before = {name for name in sys.modules if name.split(".")[0] in ("torch", "tensorflow")}
    assert isinstance(np.zeros(2), Array) and issubclass(np.ndarray, Array)
    assert not isinstance(np.zeros(2), Tensor) and not isinstance(3, Array) and not isinstance(object(), Model)
    assert isinstance([1, 2], DataSequence) and isinstance((1, ), DataSequence)
    assert isinstance(np.zeros(2), DataSequence) and not isinstance(3, DataSequence)
    assert isinstance(np.zeros(1), (Tensor, Array))  # inside a tuple of types, as a Union member would be

    def scale(x: typing.Optional[Tensor], y: typing.List[Array]) -> Tensor | None:
        return x

    hints = typing.get_type_hints(scale)
    assert hints["x"] == typing.Optional[Tensor] and hints["y"] == typing.List[Array]
    assert {name for name in sys.modules if name.split(".")[0] in ("torch", "tensorflow")} == frameworks_before


# ------------------------------------------------------------------------------------------------ item 5
@pytest.mark.parametrize("argument", ["include_metrics", "ignore_metrics"])
def test_plots_take_one_key_as_a_string(argument: str) -> None:
    pytest.importorskip("matplotlib")
    from fe_core.summary.plot import plot_logs  # pylint: disable=import-outside-toplevel
    summary = parse_log_text(LR_LOG, name="lr")
    figure = plot_logs(summary, **{argument: "LeNet_lr"})
    titles = [axis.get_title() for axis in figure.axes if axis.get_visible()]
    if argument == "include_metrics":
        assert titles == ["LeNet_lr"]
    else:
        assert "LeNet_lr" not in titles and "ce" in titles


def test_visualize_logs_and_plot_summaries_take_one_key_as_a_string(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from fe_core.summary.plot import plot_summaries, visualize_logs  # pylint: disable=import-outside-toplevel
    summary = parse_log_text(LR_LOG, name="lr")
    saved = visualize_logs([summary], save_path=str(tmp_path), include_metrics="LeNet_lr", verbose=False)
    assert saved.endswith("parse_logs.png") and (tmp_path / "parse_logs.png").stat().st_size > 0
    assert plot_summaries(summary, str(tmp_path / "a.png"), keys="ce", ignore_keys="LeNet_lr")
    with pytest.raises(ValueError, match=r"\['f1'\]"):
        visualize_logs([summary], save_path=str(tmp_path), include_metrics="f1", verbose=False)


# ------------------------------------------------------------------------------------------------ item 7
IMPERFECT = np.array([1.0, 0.0] * 50 + [0.5, 0.5] * 50).reshape(100, 2)
LABELS = [0] * 50 + [1] * 50


def test_calibration_error_reports_four_digits_as_fastestimator() -> None:
    error = CalibrationError(true_key="y", pred_key="y_pred")
    error.on_epoch_begin(Data())
    error.y_true, error.y_pred = LABELS, list(IMPERFECT)
    end = Data()
    error.on_epoch_end(end)
    assert end["calibration_error"] == 0.3536
    error.on_epoch_begin(Data())
    for start in range(0, 100, 25):  # the same through batches, labels as (N, 1) columns
        error.on_batch_end(Data({"y": np.array(LABELS[start:start + 25]).reshape(-1, 1),
                                 "y_pred": IMPERFECT[start:start + 25].astype(np.float32)}))
    end = Data()
    error.on_epoch_end(end)
    assert end["calibration_error"] == 0.3536


def test_calibration_error_collects_one_entry_per_sample_as_fastestimator() -> None:
    error = CalibrationError(true_key="y", pred_key="y_pred")
    error.on_epoch_begin(Data())
    assert error.y_true == [] and error.y_pred == []
    error.on_batch_end(Data({"y": np.array([[0, 1], [1, 0]]), "y_pred": np.array([[0.2, 0.8], [0.6, 0.4]])}))
    assert np.array_equal(error.y_true, [1, 0])  # one-hot rows become class indices
    assert np.array_equal(error.y_pred, [[0.2, 0.8], [0.6, 0.4]])  # prediction rows as given
    error.on_batch_end(Data({"y": np.array([[1], [0]]), "y_pred": np.array([[0.3, 0.7], [0.9, 0.1]])}))
    error.on_epoch_begin(Data())
    error.on_batch_end(Data({"y": np.array([[1], [0]]), "y_pred": np.array([[0.3, 0.7], [0.9, 0.1]])}))
    assert np.array_equal(error.y_true, [[1], [0]])  # (N, 1) labels kept per sample, squeezed at the epoch's end
    assert len(error.y_pred) == 2
    end = Data()
    error.on_epoch_end(end)
    assert 0.0 <= float(end["calibration_error"]) <= 1.0


# ------------------------------------------------------------------------------------------------ item 9
@pytest.mark.parametrize("trace_class, name, mode", [(EvalEssential, "eval_results", "eval"),
                                                     (TestEssential, "test_results", "test")])
def test_essential_results_are_keyed_by_metric_then_ds_id(trace_class, name, mode) -> None:
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    trace = trace_class(monitor_names={"ce", "dice"})
    system = make_system(trace, mode=mode)
    trace.on_epoch_begin(Data())
    assert dict(getattr(trace, name)) == {}
    for ds_id, ce in (("a", 1.0), ("a", 3.0), ("b", 5.0)):
        system.ds_id = ds_id
        trace.on_batch_end(Data({"ce": ce, "dice": 0.5}))
    results = getattr(trace, name)
    assert results["ce"]["a"] == [1.0, 3.0] and results["ce"]["b"] == [5.0] and results["dice"]["b"] == [0.5]
    results["ce"]["b"].append(7.0)  # the live collection, as FastEstimator's defaultdicts
    system.ds_id = ""
    end = Data()
    trace.on_epoch_end(end)
    assert float(end["ce"]) == 4.0 and float(end["ce|a"]) == 2.0 and float(end["ce|b"]) == 6.0
    setattr(trace, name, {"ce": {"": [2.0, 4.0]}})
    end = Data()
    trace.on_epoch_end(end)
    assert float(end["ce"]) == 3.0


def test_csv_logger_star_records_the_usual_keys_plus_the_named_ones_per_instance(tmp_path) -> None:
    import csv  # pylint: disable=import-outside-toplevel

    from fe_core.trace.io import CSVLogger  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    rows_of = {}
    for name, monitor in (("usual", None), ("star", ["*", "y"])):
        path = tmp_path / f"{name}.csv"
        logger = CSVLogger(str(path), monitor_names=monitor, instance_id_key="idx", mode="train")
        make_system(logger, mode="train")
        batch = Data({"idx": ["a", "b", "c"], "x": np.ones((3, 5, 5)), "y": np.ones((3, 1)), "ce": 12.5})
        batch.write_per_instance_log("dice", [0.1, 0.2, 0.3])
        end = Data()
        end.write_with_log("ce", 12.5)
        logger.on_begin(Data())
        logger.on_epoch_begin(Data())
        logger.on_batch_end(batch)
        logger.on_epoch_end(end)
        logger.on_end(Data())
        with open(path, newline="", encoding="utf-8") as file:
            rows_of[name] = {row["instance_id"]: row for row in csv.DictReader(file)}
    usual, star = rows_of["usual"], rows_of["star"]
    assert sorted(usual) == ["", "a", "b", "c"] and set(usual["a"]) == {"mode", "step", "epoch", "instance_id", "ce",
                                                                         "dice"}
    assert (usual["a"]["dice"], usual["c"]["dice"], usual[""]["ce"], usual[""]["dice"]) == ("0.1", "0.3", "12.5", "")
    assert set(star["a"]) == {"mode", "step", "epoch", "instance_id", "ce", "dice", "y"}
    assert (star["b"]["dice"], star["b"]["y"], star["b"]["ce"]) == ("0.2", "[1.]", "")
    assert (star[""]["ce"], star[""]["y"], star[""]["dice"]) == ("12.5", "", "")


def _boxes():
    gt = np.array([[[10, 10, 20, 20, 1], [0, 0, 0, 0, 0]], [[5, 5, 10, 10, 2], [30, 30, 5, 5, 1]]], dtype=float)
    pred = np.array([[[10, 10, 20, 20, 1, 0.9, 1], [0, 0, 1, 1, 2, 0.1, 0]],
                     [[5, 5, 10, 10, 2, 0.8, 1], [31, 30, 5, 5, 1, 0.7, 1]]])
    return {"bbox": gt, "pred": pred}


def test_mean_average_precision_exposes_fastestimators_attributes() -> None:
    from fe_core.trace.metric import MeanAveragePrecision  # pylint: disable=import-outside-toplevel
    metric = MeanAveragePrecision(num_classes=3)
    metric.on_epoch_begin(Data())
    assert (metric.image_ids, metric.evalimgs, metric.eval, metric.ids_in_epoch) == ([], {}, {}, 0)
    for _ in range(2):
        metric.on_batch_begin(Data())
        metric.on_batch_end(Data(_boxes()))
    assert metric.image_ids == [1, 2, 3, 4] and metric.ids_in_epoch == 4
    assert sorted(metric.ious) == [(3, 1), (4, 1), (4, 2)]  # the last batch's (image, category) IoU matrices
    np.testing.assert_allclose(metric.ious[(3, 1)], [[1.0]])
    assert sorted(metric.evalimgs) == [(1, 1), (1, 2), (1, 3), (1, 4), (2, 2), (2, 4)]  # (category, image) of the epoch
    assert metric.evalimgs[(1, 1)]["num_gt"] == 1 and metric.evalimgs[(1, 1)]["category_id"] == 1
    end = Data()
    metric.on_epoch_end(end)
    assert metric.eval["counts"] == [10, 101, 4] and metric.eval["precision"].shape == (10, 101, 4)
    assert float(end["AP50"]) == 1.0 and metric.summarize(0.5) == 1.0
    metric.accumulate()  # FastEstimator's call: the precision table of the epoch
    assert metric.eval["counts"] == [10, 101, 4]


def test_best_model_saver_exposes_monitor_op_for_subclasses_and_runs_without_a_system(tmp_path) -> None:
    import numpy_backend as nb  # pylint: disable=import-outside-toplevel

    from fe_core.trace.io import BestModelSaver  # pylint: disable=import-outside-toplevel
    nb.install()
    try:
        model = nb.build(2, 1, lr=0.1, name="model")

        class SaveOnTies(BestModelSaver):  # a FastEstimator-style subclass: its own rule through monitor_op
            def on_epoch_end(self, data):
                if self.monitor_op(data[self.metric], self.best) or data[self.metric] == self.best:
                    self.best, self.since_best = data[self.metric], 0
                else:
                    self.since_best += 1

        saver = BestModelSaver(model=model, save_dir=str(tmp_path), metric="acc", save_best_mode="max")
        assert saver.monitor_op is np.greater and saver.metric == "acc" and saver.best == -np.inf
        assert (saver.since_best, saver.save_dir, saver.model_path) == (0, str(tmp_path), None)
        assert saver.model_name == "model_best_acc"
        for value in (0.5, 0.4, 0.7):
            saver.on_epoch_end(Data({"acc": value}))
        assert (saver.best, saver.since_best) == (0.7, 0)
        assert saver.model_path is not None and saver.model_path.startswith(str(tmp_path / "model_best_acc"))
        saver.monitor_op = np.less  # replaced, as a subclass may: now lower is better
        saver.on_epoch_end(Data({"acc": 0.6}))
        assert saver.best == 0.6
        saver.model_name = "custom"
        saver.on_epoch_end(Data({"acc": 0.1}))
        assert saver.model_path.startswith(str(tmp_path / "custom"))
        ties = SaveOnTies(model=model, save_dir=None, metric="acc", save_best_mode="min")
        assert ties.monitor_op is np.less
        for value in (0.5, 0.5, 0.6):
            ties.on_epoch_end(Data({"acc": value}))
        assert (ties.best, ties.since_best) == (0.5, 1)
    finally:
        nb.uninstall()


def test_reduce_lr_on_plateau_logs_the_new_rate_as_fastestimator(capsys) -> None:
    import numpy_backend as nb  # pylint: disable=import-outside-toplevel

    from fe_core.trace.adapt import ReduceLROnPlateau  # pylint: disable=import-outside-toplevel
    nb.install()
    try:
        model = nb.build(2, 1, lr=0.001, name="model")
        before = float(nb.get_lr(model)) if hasattr(nb, "get_lr") else None
        reducer = ReduceLROnPlateau(model, metric="loss", patience=1, factor=0.1)
        reducer.on_epoch_end(Data({"loss": 1.0}))
        end = Data({"loss": 2.0})
        reducer.on_epoch_end(end)
    finally:
        nb.uninstall()
    new_lr = end.read_logs()["model_lr"]
    assert isinstance(new_lr, np.float32) and abs(float(new_lr) - 1e-4) < 1e-9  # the product in float32
    if before is not None:
        assert new_lr == np.float32(0.1 * before)
    assert f"FastEstimator-ReduceLROnPlateau: learning rate reduced to {new_lr}\n" == capsys.readouterr().out


def test_accuracy_counts_negative_labels_as_misses_without_a_system() -> None:
    from fe_core.trace.metric import Accuracy  # pylint: disable=import-outside-toplevel
    for y_true, y_pred, expected in (([1, 0, -1, 1], [[0.9], [0.2], [0.1], [0.4]], 0.5),
                                     ([[1], [-1]], [0.7, 0.3], 0.5),
                                     ([-1, -1], [[0.2], [0.1]], 0.0)):
        accuracy = Accuracy(true_key="y", pred_key="p")
        accuracy.on_epoch_begin(Data())
        accuracy.on_batch_end(Data({"y": np.array(y_true), "p": np.array(y_pred)}))
        end = Data()
        accuracy.on_epoch_end(end)
        assert float(end["accuracy"]) == expected


def test_instance_and_label_tracker_graphs_load_back_from_a_checkpoint() -> None:
    import json  # pylint: disable=import-outside-toplevel

    from fe_core.checkpoint.codec import StateCodec  # pylint: disable=import-outside-toplevel
    from fe_core.trace.xai import InstanceTracker, LabelTracker  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    codec = StateCodec()
    for trace, key in ((InstanceTracker(index="idx", metric="ce", mode="train"), "ce_by_idx"),
                       (LabelTracker(label="y", metric="ce", mode="train"), "ce_by_y")):
        system = make_system(trace, mode="train")
        trace.on_epoch_begin(Data())
        trace.on_batch_end(Data({"idx": np.array([1, 2, 3]), "y": np.array([0, 1, 1]),
                                 "ce": np.array([0.1, 0.5, 0.9])}))
        trace.on_epoch_end(Data())
        trace.on_end(Data())
        encoded, arrays = codec.encode({"custom_graphs": system.custom_graphs})  # as a checkpoint stores them
        restored = codec.decode(json.loads(json.dumps(encoded)), arrays)
        graphs = restored["custom_graphs"][key]
        assert [summary.name for summary in graphs] == [summary.name for summary in system.custom_graphs[key]]
        assert all(isinstance(summary.name, int) for summary in graphs)


def test_dice_and_accuracy_give_csv_logger_their_per_instance_values(tmp_path) -> None:
    import csv  # pylint: disable=import-outside-toplevel

    from fe_core.trace.io import CSVLogger  # pylint: disable=import-outside-toplevel
    from fe_core.trace.metric import Accuracy, Dice  # pylint: disable=import-outside-toplevel
    from trace_helpers import make_system  # pylint: disable=import-outside-toplevel
    masks = np.zeros((2, 4, 4, 2), dtype=np.float32)
    masks[0, :2, :, 0] = 1.0  # sample 0 predicted exactly, sample 1 not at all
    truth = masks.copy()
    truth[1, :, :2, 1] = 1.0
    batch = Data({"id": np.array([10, 11]), "mask": truth, "pred": masks, "y": np.array([1, 0]),
                  "y_pred": np.array([[0.2, 0.8], [0.3, 0.7]]), "ce": np.float32(0.4)})
    dice, accuracy = Dice(true_key="mask", pred_key="pred", channel_mapping={1: "b"}), Accuracy("y", "y_pred")
    logger = CSVLogger(str(tmp_path / "log.csv"), instance_id_key="id")
    for trace in (dice, accuracy, logger):
        make_system(trace)
        trace.on_epoch_begin(Data())
    logger.on_begin(Data())
    dice.on_batch_end(batch)
    accuracy.on_batch_end(batch)
    logger.on_batch_end(batch)
    end = Data()
    dice.on_epoch_end(end)
    accuracy.on_epoch_end(end)
    logger.on_epoch_end(end)
    with open(tmp_path / "log.csv", newline="", encoding="utf-8") as file:
        rows = {row["instance_id"]: row for row in csv.DictReader(file)}
    assert (rows["10"]["accuracy"], rows["11"]["accuracy"]) == ("1", "0")
    assert float(rows["10"]["Dice_b"]) == pytest.approx(1.0) and float(rows["11"]["Dice_b"]) < 1e-5
    assert float(rows["10"]["Dice_0"]) == pytest.approx(1.0)
    assert float(rows["11"]["Dice"]) == pytest.approx(0.5, abs=1e-5)  # channel 0 empty on both sides (1.0), channel 1 missed (0.0)
    assert float(rows[""]["accuracy"]) == 0.5 and rows[""]["Dice_b"] != ""


def test_accuracy_per_instance_values_are_per_sample_with_per_pixel_labels() -> None:
    from fe_core.trace.metric import Accuracy  # pylint: disable=import-outside-toplevel
    accuracy = Accuracy(true_key="y", pred_key="y_pred")
    accuracy.on_epoch_begin(Data())
    batch = Data({"y": np.array([[[0], [1]], [[1], [1]]]),
                  "y_pred": np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.9, 0.1], [0.2, 0.8]]])})
    accuracy.on_batch_end(batch)
    np.testing.assert_allclose(batch.read_per_instance_logs()["accuracy"], [1.0, 0.5])
