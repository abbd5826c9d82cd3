"""Drawing histories with matplotlib: one subplot per key, one curve per summary and mode; FastEstimator's
`visualize_logs` / `parse_log_dir(save=True)`; and no pyplot (no global state) when writing files."""
from __future__ import annotations

import numpy as np
import pytest

from fe.summary import Summary, ValWithError
from fe.summary.logs import parse_log_dir, parse_log_text, visualize_logs
from fe.summary.plot import plot_logs, plot_summaries
from fe_helpers import run_python

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LOG = """\
FastEstimator-Train: step: 1; ce: 2.0; steps/sec: 5.0;
FastEstimator-Train: step: 10; ce: 1.0; steps/sec: 6.0;
FastEstimator-Train: step: 20; ce: 0.5; steps/sec: 6.5;
FastEstimator-Train: step: 20; epoch: 1; epoch_time(sec): 1.0;
FastEstimator-Eval: step: 20; epoch: 1; ce: 0.8; accuracy: 0.7;
FastEstimator-Train: step: 30; ce: 0.4;
FastEstimator-Eval: step: 40; epoch: 2; ce: 0.6; accuracy: 0.8;
FastEstimator-Test: step: 40; epoch: 2; accuracy: 0.85;
"""


def titles(figure):
    return [axis.get_title() for axis in figure.axes if axis.get_visible()]


def labels(figure, title):
    axis = next(axis for axis in figure.axes if axis.get_title() == title)
    return sorted(line.get_label() for line in axis.get_lines())


def test_one_subplot_per_key_and_one_curve_per_summary_and_mode():
    first, second = parse_log_text(LOG, name="a"), parse_log_text(LOG.replace("ce: 0.", "ce: 0.1"), name="b")
    figure = plot_logs([first, second])
    assert titles(figure) == ["ce", "steps/sec", "epoch_time(sec)", "accuracy"]  # 'epoch' is the x axis' business
    assert labels(figure, "ce") == ["a (eval)", "a (train)", "b (eval)", "b (train)"]
    assert labels(figure, "accuracy") == ["a (eval)", "a (test)", "b (eval)", "b (test)"]
    single = plot_logs(first)
    assert labels(single, "ce") == ["eval", "train"]
    train = next(line for line in single.axes[0].get_lines() if line.get_label() == "train")
    np.testing.assert_array_equal(train.get_xdata(), [1, 10, 20, 30])
    np.testing.assert_array_equal(train.get_ydata(), [2.0, 1.0, 0.5, 0.4])


def test_keys_can_be_chosen_or_ignored_and_unknown_keys_are_errors():
    summary = parse_log_text(LOG, name="a")
    assert titles(plot_logs(summary, include_metrics=["accuracy", "epoch"])) == ["accuracy", "epoch"]
    assert "steps/sec" not in titles(plot_logs(summary, ignore_metrics=["steps/sec"]))
    with pytest.raises(ValueError, match=r"No plottable values for key\(s\) \['f1'\]"):
        plot_logs(summary, include_metrics=["f1"])
    with pytest.raises(ValueError, match="no summaries"):
        plot_logs([])


def test_smoothing_changes_train_curves_but_never_the_test_point():
    summary = parse_log_text(LOG, name="a")
    figure = plot_logs(summary, smooth_factor=1.0, include_metrics=["ce", "accuracy"])
    train = next(line for line in figure.axes[0].get_lines() if line.get_label() == "train")
    assert not np.allclose(train.get_ydata(), [2.0, 1.0, 0.5, 0.4])
    test = next(line for line in figure.axes[1].get_lines() if line.get_label() == "test")
    np.testing.assert_array_equal(test.get_ydata(), [0.85])


def test_values_from_a_live_summary_and_error_bands_are_drawn():
    summary = Summary("live")
    summary.history["train"]["ce"].update({1: np.float32(1.5), 2: np.array(1.0)})
    summary.history["eval"]["acc"].update({2: ValWithError(0.5, 0.6, 0.7), 4: ValWithError(0.6, 0.7, 0.8)})
    summary.history["eval"]["confusion"][2] = np.eye(3)  # not a scalar: not drawn
    figure = plot_logs(summary)
    assert titles(figure) == ["ce", "acc"]
    assert len(figure.axes[1].collections) == 1  # the band between the bounds


def test_plot_summaries_writes_a_png_without_touching_pyplot(tmp_path):
    out = tmp_path / "deep" / "history.png"
    result = run_python(
        "import sys\n"
        "from fe.summary.logs import parse_log_text\n"
        "from fe.summary.plot import plot_summaries\n"
        f"plot_summaries(parse_log_text({LOG!r}, name='a'), {str(out)!r})\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot was imported'\n")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_fastestimator_visualize_logs_and_parse_log_dir_save_parse_logs_png(tmp_path, capsys):
    (tmp_path / "run_1.txt").write_text(LOG)
    (tmp_path / "run_2.txt").write_text(LOG)
    saved = visualize_logs([parse_log_text(LOG, name="x")], save_path=str(tmp_path / "out"))
    assert saved == str(tmp_path / "out" / "parse_logs.png")
    assert (tmp_path / "out" / "parse_logs.png").read_bytes()[:8] == PNG_MAGIC
    summaries = parse_log_dir(str(tmp_path), save=True)
    assert [s.name for s in summaries] == ["run_1", "run_2"]
    assert (tmp_path / "parse_logs.png").read_bytes()[:8] == PNG_MAGIC
    assert f"Saving to {tmp_path / 'parse_logs.png'}" in capsys.readouterr().out
    file_path = tmp_path / "custom.png"
    assert plot_summaries(summaries, str(file_path), keys=["accuracy"]) == str(file_path)
    assert file_path.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match="does not match the group_by pattern"):
        parse_log_dir(str(tmp_path), save=True, group_by=r"^exp_(\d+)")
