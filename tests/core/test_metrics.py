"""The metric traces (Accuracy, Precision, Recall, F1Score, ConfusionMatrix, MCC): values, shapes, per-dataset keys."""
from __future__ import annotations

import warnings
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data, DSData
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.summary.system import System
from fe_core.trace import Trace, sort_traces
from fe_core.trace.logger import readable_number
from fe_core.trace.metric import MCC, Accuracy, ConfusionMatrix, F1Score, Precision, Recall

Batch = Tuple[Any, Any]


def run_epoch(trace: Trace, batches: Sequence[Batch] = (), per_ds: Dict[str, Sequence[Batch]] = None,
              mode: str = "eval") -> Dict[str, Any]:
    """Drive a metric's hooks as the Estimator does for one epoch; return what it logged."""
    system = System(network=None, pipeline=None, traces=[trace], mode=mode, ds_id="")
    system.epoch_idx = 1
    trace.system = system
    datasets = per_ds if per_ds is not None else {"": batches}
    trace.on_epoch_begin(Data())
    end_data = Data()
    for ds_id, ds_batches in datasets.items():
        system.ds_id = ds_id
        trace.on_ds_begin(Data())
        for y, y_pred in ds_batches:
            trace.on_batch_end(Data({"y": np.asarray(y), "y_pred": np.asarray(y_pred)}))
        trace.on_ds_end(DSData(ds_id, end_data) if ds_id else end_data)
    system.ds_id = ""
    trace.on_epoch_end(end_data)
    return dict(end_data.read_logs())


# ---------------------------------------------------------------- Accuracy
def test_accuracy_of_multiclass_scores_accumulates_over_batches():
    batches = [([0, 1, 2], [[.8, .1, .1], [.1, .8, .1], [.9, .05, .05]]),  # 2 of 3 right
               ([2, 2], [[0, .2, .8], [0, .7, .3]])]  # 1 of 2 right
    assert run_epoch(Accuracy("y", "y_pred"), batches) == {"accuracy": pytest.approx(3 / 5)}


@pytest.mark.parametrize("y_pred", [[.9, .2, .5, .51], [[.9], [.2], [.5], [.51]]], ids=["(N,)", "(N,1)"])
def test_accuracy_of_binary_probabilities_thresholds_at_one_half(y_pred):
    # 0.5 itself counts as class 0, as np.round does in FastEstimator
    logs = run_epoch(Accuracy("y", "y_pred"), [([1, 0, 1, 1], y_pred)])
    assert logs["accuracy"] == pytest.approx(3 / 4)


def test_accuracy_from_logits_thresholds_binary_logits_at_zero():
    logs = run_epoch(Accuracy("y", "y_pred", from_logits=True), [([1, 0, 0], [[2.0], [-1.0], [0.3]])])
    assert logs["accuracy"] == pytest.approx(2 / 3)


def test_accuracy_accepts_one_hot_labels_and_sparse_labels_with_a_unit_axis():
    scores = [[.7, .3, 0], [.1, .1, .8], [.1, .8, .1]]
    one_hot = [[1, 0, 0], [0, 0, 1], [0, 0, 1]]
    assert run_epoch(Accuracy("y", "y_pred"), [(one_hot, scores)])["accuracy"] == pytest.approx(2 / 3)
    assert run_epoch(Accuracy("y", "y_pred"), [([[0], [2], [2]], scores)])["accuracy"] == pytest.approx(2 / 3)


def test_accuracy_takes_integer_predictions_as_class_indices():
    logs = run_epoch(Accuracy("y", "y_pred"), [([0, 3, 2, 1], np.array([0, 3, 1, 1]))])
    assert logs["accuracy"] == pytest.approx(3 / 4)


def test_accuracy_without_any_batch_is_zero_not_nan():
    assert run_epoch(Accuracy("y", "y_pred"), []) == {"accuracy": 0.0}


def test_metric_resets_at_each_epoch():
    trace = Accuracy("y", "y_pred")
    assert run_epoch(trace, [([0, 0], [[1, 0], [0, 1]])])["accuracy"] == 0.5
    assert run_epoch(trace, [([0], [[1, 0]])])["accuracy"] == 1.0


def test_mismatched_sample_counts_raise_naming_trace_keys_mode_and_ds_id():
    with pytest.raises(ValueError) as error:
        run_epoch(Accuracy("y", "y_pred"), per_ds={"ds1": [([0, 1, 1], [[.9, .1], [.2, .8]])]})
    message = str(error.value)
    for part in ("Accuracy", "'y'", "'y_pred'", "mode 'eval'", "ds_id 'ds1'", "(3,)", "(2, 2)"):
        assert part in message


# ---------------------------------------------------------------- Precision / Recall / F1Score
BINARY = [([1, 1, 1, 0, 0], [.9, .4, .1, .8, .3])]  # predicted [1, 0, 0, 1, 0]: tp 1, fp 1, fn 2, tn 1


@pytest.mark.parametrize("trace, expected", [(Precision("y", "y_pred"), 1 / 2), (Recall("y", "y_pred"), 1 / 3),
                                             (F1Score("y", "y_pred"), 2 / 5)])
def test_binary_precision_recall_f1_report_the_positive_class(trace, expected):
    logs = run_epoch(trace, BINARY)
    value = logs[trace.outputs[0]]
    assert isinstance(value, float) and value == pytest.approx(expected)


def test_default_output_names_follow_fastestimator():
    names = [t("y", "p").outputs for t in (Accuracy, Precision, Recall, F1Score, MCC)]
    assert names == [["accuracy"], ["precision"], ["recall"], ["f1_score"], ["mcc"]]
    assert ConfusionMatrix("y", "p", num_classes=2).outputs == ["confusion_matrix"]
    assert Accuracy("y", "p").mode == {"eval", "test"}
    assert Accuracy("y", "p").inputs == ["y", "p"]


# y      = [0, 0, 1, 1, 2, 2, 2]
# y_pred = [0, 1, 1, 1, 2, 0, 2]
# class 0: tp 1, fp 1, fn 1 | class 1: tp 2, fp 1, fn 0 | class 2: tp 2, fp 0, fn 1
MULTI_Y = [0, 0, 1, 1, 2, 2, 2]
MULTI_PRED = np.eye(3)[[0, 1, 1, 1, 2, 0, 2]] * 0.8 + 0.05
MULTI = [(MULTI_Y[:4], MULTI_PRED[:4]), (MULTI_Y[4:], MULTI_PRED[4:])]


@pytest.mark.parametrize("cls, per_class", [(Precision, [1 / 2, 2 / 3, 1]), (Recall, [1 / 2, 1, 2 / 3]),
                                            (F1Score, [1 / 2, 4 / 5, 4 / 5])])
def test_multiclass_scores_are_per_class_arrays_by_default(cls, per_class):
    value = run_epoch(cls("y", "y_pred"), MULTI)[cls("y", "p").outputs[0]]
    assert isinstance(value, np.ndarray)
    np.testing.assert_allclose(value, per_class)


def test_average_is_set_by_the_metric_itself():
    # FastEstimator's documented contract: average ('binary' for binary predictions, else None) is the metric's own
    for cls in (Precision, Recall, F1Score):
        with pytest.raises(ValueError, match=r"\['average'\] cannot exist in kwargs of " + cls.__name__):
            cls("y", "y_pred", average="macro")


def test_labels_and_pos_label_choose_the_classes_reported():
    logs = run_epoch(Recall("y", "y_pred", labels=[2, 0]), MULTI)
    np.testing.assert_allclose(logs["recall"], [2 / 3, 1 / 2])
    assert run_epoch(Precision("y", "y_pred", pos_label=0), BINARY)["precision"] == pytest.approx(1 / 3)
    assert run_epoch(Recall("y", "y_pred", pos_label=0), BINARY)["recall"] == pytest.approx(1 / 2)


def test_zero_division_gives_zero_without_warnings():
    # class 2 is never predicted (precision 0/0) and class 1 never occurs (recall 0/0)
    batches = [([0, 0, 2], [[.9, .1, 0], [.1, .9, 0], [.8, .2, 0]])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any RuntimeWarning (0/0) or other warning fails the test
        precision = run_epoch(Precision("y", "y_pred"), batches)["precision"]
        recall = run_epoch(Recall("y", "y_pred"), batches)["recall"]
        f1 = run_epoch(F1Score("y", "y_pred"), batches)["f1_score"]
        empty = run_epoch(Precision("y", "y_pred"), [])["precision"]
        mcc = run_epoch(MCC("y", "y_pred"), [([0, 1], [[.9, .1], [.9, .1]])])["mcc"]
        normalized = run_epoch(ConfusionMatrix("y", "y_pred", 3, normalize="true"), batches)["confusion_matrix"]
    np.testing.assert_allclose(precision, [1 / 2, 0, 0])
    np.testing.assert_allclose(recall, [1 / 2, 0, 0])
    np.testing.assert_allclose(f1, [1 / 2, 0, 0])  # class 0: tp 1, fp 1, fn 1
    assert np.asarray(empty).size == 0 and mcc == 0.0
    np.testing.assert_allclose(normalized, [[1 / 2, 1 / 2, 0], [0, 0, 0], [1, 0, 0]])


def test_zero_division_value_can_be_chosen():
    value = run_epoch(Precision("y", "y_pred", zero_division=1), [([0, 1], [[.9, .1], [.9, .1]])])["precision"]
    np.testing.assert_allclose(value, [1 / 2, 1.0])  # class 1 is never predicted


def test_reserved_kwargs_are_rejected_at_construction():
    with pytest.raises(ValueError, match=r"\['y_true'\] cannot exist in kwargs of Precision"):
        Precision("y", "p", y_true=[1])
    with pytest.raises(ValueError, match=r"\['y_pred'\] cannot exist in kwargs of MCC"):
        MCC("y", "p", y_pred=[1])
    with pytest.raises(ValueError, match=r"\['labels'\] cannot exist in kwargs of ConfusionMatrix"):
        ConfusionMatrix("y", "p", 3, labels=[0, 1])


# ---------------------------------------------------------------- MCC
@pytest.mark.parametrize("y_pred, expected", [([1, 0, 0, 0], 2 / np.sqrt(12)), ([1, 1, 0, 0], 1.0),
                                              ([0, 0, 1, 1], -1.0)])
def test_binary_mcc(y_pred, expected):
    probabilities = np.asarray(y_pred, dtype=np.float32) * 0.8 + 0.1
    assert run_epoch(MCC("y", "y_pred"), [([1, 1, 0, 0], probabilities)])["mcc"] == pytest.approx(expected)


def test_multiclass_mcc_matches_the_formula():
    # cm = [[1,1,0],[0,2,0],[1,0,2]]: t = [2,2,3], p = [2,3,2], c = 5, s = 7
    cov_tp, cov_pp, cov_tt = 5 * 7 - (2 * 2 + 2 * 3 + 3 * 2), 49 - (4 + 9 + 4), 49 - (4 + 4 + 9)
    assert run_epoch(MCC("y", "y_pred"), MULTI)["mcc"] == pytest.approx(cov_tp / np.sqrt(cov_pp * cov_tt))


# ---------------------------------------------------------------- ConfusionMatrix
def test_confusion_matrix_counts_true_rows_by_predicted_columns():
    value = run_epoch(ConfusionMatrix("y", "y_pred", num_classes=4), MULTI)["confusion_matrix"]
    assert value.dtype == np.int64
    np.testing.assert_array_equal(value, [[1, 1, 0, 0], [0, 2, 0, 0], [1, 0, 2, 0], [0, 0, 0, 0]])


def test_confusion_matrix_normalize():
    value = run_epoch(ConfusionMatrix("y", "y_pred", num_classes=3, normalize="true"), MULTI)["confusion_matrix"]
    np.testing.assert_allclose(value, [[1 / 2, 1 / 2, 0], [0, 1, 0], [1 / 3, 0, 2 / 3]])
    value = run_epoch(ConfusionMatrix("y", "y_pred", num_classes=4, normalize="pred"), MULTI)["confusion_matrix"]
    np.testing.assert_allclose(value[:, 3], 0)  # an empty column stays 0, without a warning
    np.testing.assert_allclose(value[:, 0], [1 / 2, 0, 1 / 2, 0])


def test_confusion_matrix_of_binary_probabilities():
    value = run_epoch(ConfusionMatrix("y", "y_pred", num_classes=2), BINARY)["confusion_matrix"]
    np.testing.assert_array_equal(value, [[1, 1], [2, 1]])


def test_confusion_matrix_rejects_a_class_beyond_num_classes():
    with pytest.raises(ValueError, match=r"ConfusionMatrix .*'y'.*found class index 2, but num_classes is 2"):
        run_epoch(ConfusionMatrix("y", "y_pred", num_classes=2), MULTI)
    with pytest.raises(ValueError, match="num_classes must be a positive integer"):
        ConfusionMatrix("y", "y_pred", num_classes=0)


# ---------------------------------------------------------------- per-dataset keys
def test_per_ds_logs_each_named_dataset_and_the_combination():
    logs = run_epoch(Accuracy("y", "y_pred"), per_ds={"a": [([0, 1], [[.9, .1], [.8, .2]])],  # 1 of 2
                                                      "b": [([1, 1, 0], [[.1, .9], [.3, .7], [.6, .4]])]})  # 3 of 3
    assert logs == {"accuracy|a": 0.5, "accuracy|b": 1.0, "accuracy": pytest.approx(4 / 5)}


def test_per_ds_key_is_written_even_when_on_ds_end_gets_plain_data():
    trace = Accuracy("y", "y_pred")
    system = System(network=None, pipeline=None, traces=[trace], mode="eval", ds_id="a")
    trace.system = system
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data({"y": np.array([1]), "y_pred": np.array([[.2, .8]])}))
    data = Data()
    trace.on_ds_end(data)
    assert data.read_logs() == {"accuracy|a": 1.0}


def test_per_ds_confusion_matrices_sum_to_the_combined_one():
    logs = run_epoch(ConfusionMatrix("y", "y_pred", num_classes=3), per_ds={"a": MULTI[:1], "b": MULTI[1:]})
    np.testing.assert_array_equal(logs["confusion_matrix"], logs["confusion_matrix|a"] + logs["confusion_matrix|b"])
    np.testing.assert_array_equal(logs["confusion_matrix|b"], [[0, 0, 0], [0, 0, 0], [1, 0, 2]])


def test_per_ds_false_or_a_piped_output_name_logs_only_the_combination():
    per_ds = {"a": [([0], [[.9, .1]])], "b": [([0], [[.1, .9]])]}
    assert run_epoch(Accuracy("y", "y_pred", per_ds=False), per_ds=per_ds) == {"accuracy": 0.5}
    assert run_epoch(Accuracy("y", "y_pred", output_name="acc|x"), per_ds=per_ds) == {"acc|x": 0.5}


def test_get_outputs_lists_per_ds_keys_for_the_datasets_the_trace_runs_on():
    assert Accuracy("y", "p").get_outputs(["a", "b"]) == ["accuracy", "accuracy|a", "accuracy|b"]
    assert MCC("y", "p", ds_id="!b").get_outputs(["a", "b"]) == ["mcc", "mcc|a"]
    assert Precision("y", "p").get_outputs([""]) == ["precision"]
    assert Recall("y", "p", per_ds=False).get_outputs(["a"]) == ["recall"]


def test_a_trace_reading_a_per_ds_key_is_sorted_after_the_metric():
    acc = Accuracy("y", "y_pred")
    reader = Trace(inputs="accuracy|a", outputs="best")
    assert sort_traces([reader, acc], ds_ids=["a", "b"]) == [acc, reader]


# ---------------------------------------------------------------- in a real run
@pytest.fixture
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def classification_data(n: int, seed: int) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = np.argmax(x[:, :3] + 0.3 * rng.normal(size=(n, 3)), axis=1).astype(np.int64)
    return NumpyDataset({"x": x, "y": y})


def classifier(lr: float = 0.5):
    model = nb.build(4, 3, lr=lr, name="clf")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                            UpdateOp(model=model, loss_name="ce")])
    return model, network


def expected_confusion(model, dataset: NumpyDataset) -> np.ndarray:
    everything = dataset.get_batch(list(range(len(dataset))))
    x, y = everything["x"], everything["y"]
    pred = np.argmax(x.astype(np.float64) @ model.W + model.b, axis=1)
    cm = np.zeros((3, 3), dtype=np.int64)
    np.add.at(cm, (y, pred), 1)
    return cm


class SeesPerDsAccuracy(Trace):
    """Reads a per-dataset metric at epoch end, as a model saver watching 'accuracy|a' would."""

    def __init__(self):
        super().__init__(inputs="accuracy|a", outputs="seen", mode="eval")
        self.seen: List[float] = []

    def on_epoch_end(self, data):
        self.seen.append(data["accuracy|a"])


def test_estimator_run_logs_per_ds_and_combined_metrics_into_the_summary(numpy_backend, capsys):
    sets = {"a": classification_data(20, 1), "b": classification_data(28, 2)}
    model, network = classifier()
    pipeline = Pipeline(train_data=classification_data(96, 0), eval_data=sets, test_data=classification_data(24, 3),
                        batch_size=8)
    watcher = SeesPerDsAccuracy()
    traces = [watcher, Accuracy("y", "y_pred"), ConfusionMatrix("y", "y_pred", num_classes=3),
              F1Score("y", "y_pred"), MCC("y", "y_pred", ds_id="a")]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=6)
    summary = estimator.fit("metrics")
    history = summary.history["eval"]
    for key in ("accuracy", "accuracy|a", "accuracy|b", "confusion_matrix", "confusion_matrix|a",
                "confusion_matrix|b", "f1_score", "f1_score|a", "f1_score|b", "mcc", "mcc|a"):
        assert sorted(history[key]) == [12, 24], key
    assert "mcc|b" not in history  # MCC runs on ds 'a' only
    # After the last epoch, eval ran with the final weights: recompute its confusion matrices independently.
    cm_a, cm_b = expected_confusion(model, sets["a"]), expected_confusion(model, sets["b"])
    np.testing.assert_array_equal(history["confusion_matrix|a"][24], cm_a)
    np.testing.assert_array_equal(history["confusion_matrix|b"][24], cm_b)
    np.testing.assert_array_equal(history["confusion_matrix"][24], cm_a + cm_b)
    assert history["accuracy|a"][24] == pytest.approx(np.trace(cm_a) / 20)
    assert history["accuracy|b"][24] == pytest.approx(np.trace(cm_b) / 28)
    assert history["accuracy"][24] == pytest.approx((np.trace(cm_a) + np.trace(cm_b)) / 48)
    assert history["mcc"][24] == pytest.approx(history["mcc|a"][24])  # only 'a' counted
    assert watcher.seen == [history["accuracy|a"][12], history["accuracy|a"][24]]
    out = capsys.readouterr().out
    eval_line = [line for line in out.splitlines() if line.startswith("FastEstimator-Eval: step: 24")][0]
    assert f"accuracy|a: {readable_number(history['accuracy|a'][24])};" in eval_line  # 7 significant digits

    summary = estimator.test("metrics")
    cm_test = expected_confusion(model, classification_data(24, 3))
    np.testing.assert_array_equal(summary.history["test"]["confusion_matrix"][24], cm_test)
    assert summary.history["test"]["accuracy"][24] == pytest.approx(np.trace(cm_test) / 24)
    assert not any("|" in key for key in summary.history["test"])  # one unnamed test set: no per-ds keys


def test_single_unnamed_eval_set_logs_only_the_plain_key(numpy_backend):
    _, network = classifier()
    pipeline = Pipeline(train_data=classification_data(16, 0), eval_data=classification_data(16, 1), batch_size=8)
    summary = Estimator(pipeline=pipeline, network=network, epochs=1, traces=Precision("y", "y_pred"),
                        log_steps=0).fit("single")
    assert "precision" in summary.history["eval"]
    assert summary.history["eval"]["precision"][2].shape == (3,)
    assert not [key for key in summary.history["eval"] if "|" in key]
