"""FastEstimator semantics, part 3 (issue 36), numpy only: `fe.types` in isinstance checks, plot keys given as one
string, CalibrationError's unrounded value and per-sample collection, and the state FastEstimator's traces expose."""
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
    assert isinstance(np.zeros(2), Array) and issubclass(np.ndarray, Array)
    assert not isinstance(np.zeros(2), Tensor) and not isinstance(3, Array) and not isinstance(object(), Model)
    assert isinstance([1, 2], DataSequence) and isinstance((1, ), DataSequence)
    assert isinstance(np.zeros(2), DataSequence) and not isinstance(3, DataSequence)
    assert isinstance(np.zeros(1), (Tensor, Array))  # inside a tuple of types, as a Union member would be

    def scale(x: typing.Optional[Tensor], y: typing.List[Array]) -> Tensor | None:
        return x

    hints = typing.get_type_hints(scale)
    assert hints["x"] == typing.Optional[Tensor] and hints["y"] == typing.List[Array]
    assert "torch" not in sys.modules and "tensorflow" not in sys.modules


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


def test_calibration_error_reports_the_unrounded_value() -> None:
    error = CalibrationError(true_key="y", pred_key="y_pred")
    error.on_epoch_begin(Data())
    error.y_true, error.y_pred = LABELS, list(IMPERFECT)
    end = Data()
    error.on_epoch_end(end)
    assert end["calibration_error"] == 0.3535533905932738
    error.on_epoch_begin(Data())
    for start in range(0, 100, 25):  # the same through batches, labels as (N, 1) columns
        error.on_batch_end(Data({"y": np.array(LABELS[start:start + 25]).reshape(-1, 1),
                                 "y_pred": IMPERFECT[start:start + 25].astype(np.float32)}))
    end = Data()
    error.on_epoch_end(end)
    assert end["calibration_error"] == 0.3535533905932738


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
