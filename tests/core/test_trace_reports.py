"""Traceability, fe.util.latex_util / traceability_util helpers, and TestReport + Traceability in a real run."""
from __future__ import annotations

import json

import numpy as np
import pytest

import numpy_backend as nb
from trace_helpers import make_system
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.report import latex_document
from fe_core.report.traceability import FeSummaryTable, is_restorable, trace_model, traceable
from fe_core.summary.summary import Summary
from fe_core.trace.io import TestCase, TestReport, Traceability
from fe_core.trace.metric import Accuracy

pylatex = pytest.importorskip("pylatex")


@traceable()
class Scaler:
    def __init__(self, factor: float = 2.0, name: str = "s") -> None:
        self.factor = factor
        self.name = name
        self.fn = print


@traceable(blacklist="secret")
class Child(Scaler):
    def __init__(self, secret: int = 1) -> None:
        super().__init__(factor=5.0)
        self.secret = secret


def test_traceable_records_the_outermost_constructor_arguments_and_restorable_state():
    table = Child(secret=7).fe_summary()[0]
    assert isinstance(table, FeSummaryTable)
    assert table.kwargs == {"secret": 7} and table.name == "Child"
    assert Child().fe_state() == {"factor": 5.0, "name": "s"}
    assert Scaler(3.0).fe_summary()[0].kwargs == {"factor": 3.0, "name": "s"}
    assert is_restorable([1, {"a": np.zeros(3)}])[0] and not is_restorable([print])[0]
    assert not is_restorable(np.zeros(1000), memory_limit=100)[0]
    model = trace_model(Scaler(), model_idx=-1, model_fn=Scaler, optimizer_fn="adam", weights_path=None)
    assert model.fe_summary()[0].kwargs["optimizer_fn"] == "adam"


def test_latex_helpers_render_escaped_latex():
    from fe_core.report.latex import HrefFEID, IterJoin, PyContainer, Verbatim, WrapText
    from fe_core.util.wrappers import FEID
    assert PyContainer({"a_b": 1}).dumps() == r"\{a\_b: 1\}"
    assert PyContainer((1, 2, 3), truncate=2).dumps() == r"(1, 2, \ldots)"
    assert IterJoin([1, "x&y"], " | ").dumps() == r"1 | x\&y"
    assert WrapText(123456, threshold=3).dumps() == r"\seqsplit{123456}"
    assert r"\hyperref[tbl:@FE5]" in HrefFEID(FEID(5), "model").dumps()
    assert r"\begin{verbatim}" in Verbatim("a_b & c").dumps() and "a_b & c" in Verbatim("a_b & c").dumps()
    with pytest.raises(AssertionError):
        WrapText([1], threshold=3)


@pytest.mark.slow
def test_traceability_writes_tex_with_tables_graphs_and_a_clear_note_without_latex(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(latex_document, "latex_compiler", lambda: None)
    trace = Traceability(str(tmp_path / "report"), extra_objects=[Scaler(4.0)])
    system = make_system(trace, mode="train")
    system.summary = Summary("exp_1")
    for step, loss in ((1, 1.0), (2, 0.5)):
        system.summary.history["train"]["ce"][step] = loss
    graph = Summary("7")
    graph.history["eval"]["ce"][2] = 0.3
    system.add_graph("ce_by_idx", [graph])
    trace.on_begin(Data())
    trace.on_end(Data())
    tex = (tmp_path / "report" / "exp_1.tex").read_text()
    assert r"\section{Training Summary}" in tex and r"\section{System Configuration}" in tex
    assert "Scaler" in tex and "arg: factor" in tex and "4.0" in tex
    assert "resources/exp\\_1\\_logs.png" in tex or "resources/exp_1_logs.png" in tex
    assert (tmp_path / "report" / "resources" / "exp_1_logs.png").stat().st_size > 1000
    assert (tmp_path / "report" / "resources" / "exp_1_ce_by_idx.png").exists()
    assert "no LaTeX compiler" in capsys.readouterr().out
    assert trace.report_path.endswith("exp_1.tex")


@pytest.fixture
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


@pytest.mark.slow
def test_test_report_and_traceability_in_an_estimator_run(numpy_backend, tmp_path, monkeypatch):
    monkeypatch.setattr(latex_document, "latex_compiler", lambda: None)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype(np.float32)
    data = NumpyDataset({"x": x, "y": np.argmax(x[:, :3], axis=1).astype(np.int64)})
    model = nb.build(4, 3, lr=0.5, name="clf")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                            UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=data, eval_data=data, test_data=data, batch_size=16)
    report = TestReport([TestCase("accuracy is high", lambda accuracy: accuracy > 0.5),
                         TestCase("labels are classes", lambda y: y < 3, aggregate=False)],
                        save_path=str(tmp_path / "tests"))
    traces = [Accuracy("y", "y_pred"), report, Traceability(str(tmp_path / "trace"))]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=0)
    estimator.fit("run")
    estimator.test()
    result = json.loads((tmp_path / "tests" / "run_TestReport.json").read_text())
    assert [test["passed"] for test in result["tests"]] == [True, True]
    tex = (tmp_path / "trace" / "run.tex").read_text()
    assert "clf" in tex and "Accuracy" in tex and "Network Ops" in tex


@pytest.mark.slow
def test_xai_traces_and_image_saver_in_an_estimator_run(numpy_backend, tmp_path):
    from fe_core.trace.io import ImageSaver
    from fe_core.trace.xai import GradCAM, InstanceTracker, LabelTracker
    rng = np.random.default_rng(0)
    n = 32
    x = rng.normal(size=(n, 4)).astype(np.float32)
    grads = np.zeros((n, 2, 2, 3), dtype=np.float32)
    grads[:, 0, 0] = 1.0
    data = NumpyDataset({"x": x, "y": np.argmax(x[:, :3], axis=1).astype(np.int64), "idx": np.arange(n),
                         "img": rng.random((n, 8, 8, 1)).astype(np.float32), "g": grads})
    model = nb.build(4, 3, lr=0.5, name="clf")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="sample_ce", from_logits=True,
                                         average_loss=False),
                            UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=data, eval_data=data, batch_size=8)
    traces = [GradCAM(images="img", grads="g", labels="y", preds="y_pred", n_samples=3),
              InstanceTracker(index="idx", metric="sample_ce", n_max_to_keep=2, n_min_to_keep=1),
              LabelTracker(label="y", metric="sample_ce"),
              ImageSaver(["gradcam", "sample_ce_by_idx", "sample_ce_by_y"], save_dir=str(tmp_path))]
    Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=0).fit()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert "gradcam_eval_epoch_1.png" in names and "gradcam_eval_epoch_2.png" in names
    assert "sample_ce_by_idx_train_epoch_2.png" in names or "sample_ce_by_idx_eval_epoch_2.png" in names
    assert any(name.startswith("sample_ce_by_y_") for name in names)
