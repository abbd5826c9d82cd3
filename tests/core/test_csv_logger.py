"""The CSVLogger trace: the file it writes parses back (csv module) to the values the run logged."""
from __future__ import annotations

import csv
import json
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.summary.system import System
from fe_core.trace import Trace
from fe_core.trace.io import CSVLogger
from fe_core.trace.metric import Accuracy, ConfusionMatrix


def read_csv(path) -> Tuple[List[str], List[Dict[str, str]]]:
    with open(path, newline="") as file:
        reader = csv.DictReader(file)
        return list(reader.fieldnames), list(reader)


# ---------------------------------------------------------------- hook by hook
def make_system(trace: Trace) -> System:
    system = System(network=None, pipeline=None, traces=[trace], log_steps=None)
    system.reset(summary_name=None)
    trace.system = system
    return system


def end_epoch(trace: CSVLogger, system: System, mode: str, epoch: int, step: int, **logs: Any) -> None:
    system.mode, system.epoch_idx, system.global_step = mode, epoch, step
    data = Data()
    for key, value in logs.items():
        data.write_with_log(key, value)
    trace.on_epoch_end(data)


def test_header_grows_when_a_new_key_appears_and_every_row_keeps_every_column(tmp_path):
    path = tmp_path / "log.csv"
    trace = CSVLogger(str(path))
    system = make_system(trace)
    trace.on_begin(Data())
    end_epoch(trace, system, "eval", 1, 10, loss=0.5)
    assert read_csv(path) == (["mode", "step", "epoch", "loss"],
                              [{"mode": "eval", "step": "10", "epoch": "1", "loss": "0.5"}])  # written at epoch end
    end_epoch(trace, system, "eval", 2, 20, loss=np.float32(0.25), acc=0.75)
    end_epoch(trace, system, "eval", 3, 30, loss=0.125, acc=np.array(1.0))
    trace.on_end(Data())
    header, rows = read_csv(path)
    assert header == ["mode", "step", "epoch", "acc", "loss"]
    assert rows == [{"mode": "eval", "step": "10", "epoch": "1", "acc": "", "loss": "0.5"},
                    {"mode": "eval", "step": "20", "epoch": "2", "acc": "0.75", "loss": "0.25"},
                    {"mode": "eval", "step": "30", "epoch": "3", "acc": "1.0", "loss": "0.125"}]


def test_arrays_are_written_as_json_lists_keeping_their_shape(tmp_path):
    path = tmp_path / "log.csv"
    trace = CSVLogger(str(path))
    system = make_system(trace)
    trace.on_begin(Data())
    matrix = np.array([[3, 1], [0, 4]])
    end_epoch(trace, system, "eval", 1, 5, confusion=matrix, precision=np.array([0.5, 0.25]))
    _, rows = read_csv(path)
    assert json.loads(rows[0]["confusion"]) == matrix.tolist()
    assert json.loads(rows[0]["precision"]) == [0.5, 0.25]


def test_a_new_fit_starts_the_file_afresh(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("old,header\n1,2\n")
    trace = CSVLogger(str(path))
    system = make_system(trace)
    trace.on_begin(Data())
    end_epoch(trace, system, "eval", 1, 4, acc=0.5)
    assert read_csv(path) == (["mode", "step", "epoch", "acc"],
                              [{"mode": "eval", "step": "4", "epoch": "1", "acc": "0.5"}])


def test_reserved_monitor_names_and_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match=r"monitor_names \['epoch'\] clash"):
        CSVLogger("x.csv", monitor_names=["acc", "epoch"])
    with pytest.raises(ValueError, match="filename must be a non-empty path"):
        CSVLogger("")
    with pytest.raises(ValueError, match="instance_id_key must be a key name"):
        CSVLogger("x.csv", instance_id_key=["id"])


def test_it_runs_after_every_other_trace():
    trace = CSVLogger("x.csv", monitor_names="acc")
    assert trace.inputs == ["*", "acc"] and trace.mode == {"eval", "test"}


# ---------------------------------------------------------------- in a real run
@pytest.fixture
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def classification_data(n: int, seed: int) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return NumpyDataset({"x": x, "y": np.argmax(x[:, :3], axis=1).astype(np.int64),
                         "id": np.arange(1000 * seed, 1000 * seed + n)})


def classifier():
    model = nb.build(4, 3, lr=0.5, name="clf")
    return make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                         CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                         UpdateOp(model=model, loss_name="ce")])


def as_read(cell: str) -> Any:
    return json.loads(cell) if cell.startswith("[") else float(cell)


def test_estimator_run_writes_one_row_per_eval_epoch_then_appends_the_test_row(numpy_backend, tmp_path):
    path = tmp_path / "out" / "log.csv"
    pipeline = Pipeline(train_data=classification_data(32, 0),
                        eval_data={"a": classification_data(8, 1), "b": classification_data(16, 2)},
                        test_data=classification_data(8, 3), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=classifier(), epochs=2, log_steps=2,
                          traces=[CSVLogger(str(path)), Accuracy("y", "y_pred"), ConfusionMatrix("y", "y_pred", 3)])
    summary = estimator.fit("csv")
    header, rows = read_csv(path)
    assert header[:3] == ["mode", "step", "epoch"]
    assert header[3:] == ["accuracy", "accuracy|a", "accuracy|b", "ce", "ce|a", "ce|b", "confusion_matrix",
                          "confusion_matrix|a", "confusion_matrix|b"]
    assert [(row["mode"], row["step"], row["epoch"]) for row in rows] == [("eval", "4", "1"), ("eval", "8", "2")]
    for row in rows:
        step = int(row["step"])
        for key in header[3:]:
            np.testing.assert_allclose(as_read(row[key]), summary.history["eval"][key][step], rtol=1e-12, err_msg=key)

    estimator.test("csv")
    header, rows = read_csv(path)
    assert [(row["mode"], row["step"], row["epoch"]) for row in rows] == [("eval", "4", "1"), ("eval", "8", "2"),
                                                                         ("test", "8", "2")]
    assert float(rows[-1]["accuracy"]) == pytest.approx(float(summary.history["test"]["accuracy"][8]))
    assert rows[-1]["accuracy|a"] == ""  # the test set is unnamed


def test_monitor_names_limit_the_columns(numpy_backend, tmp_path):
    path = tmp_path / "log.csv"
    pipeline = Pipeline(train_data=classification_data(32, 0), eval_data=classification_data(8, 1), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=classifier(), epochs=1, log_steps=2,
                          traces=[Accuracy("y", "y_pred"), CSVLogger(str(path), monitor_names="accuracy")])
    summary = estimator.fit("csv")
    assert read_csv(path) == (["mode", "step", "epoch", "accuracy"],
                              [{"mode": "eval", "step": "4", "epoch": "1",
                                "accuracy": str(summary.history["eval"]["accuracy"][4])}])


def test_a_monitor_name_nothing_produces_is_reported_at_warmup(numpy_backend, tmp_path):
    pipeline = Pipeline(train_data=classification_data(16, 0), eval_data=classification_data(8, 1), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=classifier(), epochs=1, log_steps=2,
                          traces=[Accuracy("y", "y_pred"), CSVLogger(str(tmp_path / "log.csv"), monitor_names="acc")])
    with pytest.raises(KeyError, match=r"CSVLogger reads key 'acc'.*mode 'eval'"):
        estimator.fit()


def test_in_train_mode_it_adds_a_row_at_every_log_step(numpy_backend, tmp_path):
    path = tmp_path / "log.csv"
    pipeline = Pipeline(train_data=classification_data(32, 0), eval_data=classification_data(8, 1), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=classifier(), epochs=1, log_steps=2,
                          traces=[Accuracy("y", "y_pred"), CSVLogger(str(path), mode=None)])
    summary = estimator.fit("csv")
    _, rows = read_csv(path)
    assert [(row["mode"], row["step"]) for row in rows] == [("train", "1"), ("train", "2"), ("train", "4"),
                                                           ("train", "4"), ("eval", "4")]
    assert float(rows[1]["ce"]) == pytest.approx(float(summary.history["train"]["ce"][2]))
    assert rows[1]["steps/sec"] != "" and rows[1]["epoch_time(sec)"] == ""
    assert rows[3]["ce"] == "" and rows[3]["epoch_time(sec)"] != ""  # the train epoch-end row
    assert float(rows[4]["accuracy"]) == pytest.approx(float(summary.history["eval"]["accuracy"][4]))


class PerSampleCorrect(Trace):
    """Writes one value per sample: whether the prediction was right."""

    def __init__(self):
        super().__init__(inputs=["y", "y_pred"], outputs="correct", mode="eval")

    def on_batch_end(self, data):
        data.write_per_instance_log("correct", (np.argmax(data["y_pred"], axis=-1) == data["y"]).astype(int))


def test_instance_id_key_adds_one_row_per_sample(numpy_backend, tmp_path):
    path = tmp_path / "log.csv"
    pipeline = Pipeline(train_data=classification_data(16, 0), eval_data=classification_data(12, 1), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=classifier(), epochs=1, log_steps=0,
                          traces=[Accuracy("y", "y_pred"), PerSampleCorrect(),
                                  CSVLogger(str(path), instance_id_key="id")])
    summary = estimator.fit("ids")
    header, rows = read_csv(path)
    assert header == ["mode", "step", "epoch", "instance_id", "accuracy", "ce", "correct"]
    instance_rows = [row for row in rows if row["instance_id"]]
    assert sorted(int(row["instance_id"]) for row in instance_rows) == list(range(1000, 1012))
    assert all(row["mode"] == "eval" and row["correct"] in ("0", "1") for row in instance_rows)
    epoch_row = rows[-1]
    assert epoch_row["instance_id"] == "" and epoch_row["correct"] == ""
    correct = sum(int(row["correct"]) for row in instance_rows)
    assert float(epoch_row["accuracy"]) == pytest.approx(correct / 12)
    assert float(epoch_row["accuracy"]) == pytest.approx(float(summary.history["eval"]["accuracy"][2]))
