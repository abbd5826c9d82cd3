"""`fe logs` says where the plot goes, never overwrites an existing image unless asked (--overwrite), and draws
losses and metrics by default, bookkeeping keys only on request (--all_keys / --include) (in process, in a temp
working directory)."""
from __future__ import annotations

import pytest

from fe.cli.logs import bookkeeping_keys
from fe.cli.main import main
from fe_core.summary import plot as plot_module

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LOG = """FastEstimator-Start: step: 1; logging_interval: 2; num_device: 0;
FastEstimator-Train: step: 1; ce: 2.2962518;
FastEstimator-Train: step: 2; ce: 2.3083472; steps/sec: 608.14;
FastEstimator-Train: step: 4; ce: 2.2885952; steps/sec: 295.49;
FastEstimator-Train: step: 4; epoch: 1; epoch_time(sec): 0.02;
FastEstimator-BestModelSaver: Saved model to /somewhere/model_best_accuracy.pt
FastEstimator-Eval: step: 4; epoch: 1; accuracy: 0.12; ce: 2.28; max_accuracy: 0.12; since_best_accuracy: 0;
FastEstimator-Train: step: 6; ce: 2.2571394; steps/sec: 239.22; model_lr: 0.001;
FastEstimator-Train: step: 8; ce: 2.2780135; steps/sec: 290.84;
FastEstimator-Train: step: 8; epoch: 2; epoch_time(sec): 0.02;
FastEstimator-Eval: step: 8; epoch: 2; accuracy: 0.11; ce: 2.25; max_accuracy: 0.12; since_best_accuracy: 1;
FastEstimator-Finish: step: 8; model_lr: 0.001; total_time(sec): 0.07;
FastEstimator-Test: step: 8; epoch: 2; accuracy: 0.1; ce: 2.2864625;
"""


@pytest.fixture
def log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.txt").write_text(LOG)
    return tmp_path


@pytest.fixture
def drawn_titles(monkeypatch):
    """The subplot titles of every figure `fe logs` draws."""
    titles = []
    original = plot_module.plot_logs

    def recording_plot_logs(*args, **kwargs):
        figure = original(*args, **kwargs)
        titles.append([axis.get_title() for axis in figure.axes if axis.get_visible()])
        return figure

    monkeypatch.setattr(plot_module, "plot_logs", recording_plot_logs)
    return titles


def one_line_error(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_help_says_where_the_image_goes_and_how_to_overwrite_it(capsys):
    with pytest.raises(SystemExit):
        main(["logs", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--out FILE the image file to write (default: history.png in the working directory)" in text
    assert "--overwrite replace the image file if it exists" in text
    assert "--all_keys" in text


def test_an_existing_image_is_not_overwritten_without_overwrite(log_dir, capsys):
    assert main(["logs", "run.txt"]) == 0
    image = log_dir / "history.png"
    assert image.read_bytes()[:8] == PNG_MAGIC
    image.write_bytes(b"precious")
    capsys.readouterr()
    assert main(["logs", "run.txt"]) == 2
    assert one_line_error(capsys) == ("fe logs: error: history.png already exists; pass --overwrite to replace it, or "
                                      "choose another file with --out")
    assert image.read_bytes() == b"precious"
    assert main(["logs", "run.txt", "--overwrite"]) == 0
    assert image.read_bytes()[:8] == PNG_MAGIC


def test_fastestimator_save_flag_also_refuses_to_overwrite(log_dir, capsys):
    assert main(["logs", "run.txt", "--save"]) == 0
    assert (log_dir / "parse_logs.png").read_bytes()[:8] == PNG_MAGIC
    assert main(["logs", "run.txt", "--save", str(log_dir)]) == 2
    assert "parse_logs.png already exists; pass --overwrite" in one_line_error(capsys)
    assert main(["logs", "run.txt", "--save", str(log_dir), "--overwrite"]) == 0


def test_only_losses_and_metrics_are_drawn_by_default(log_dir, drawn_titles):
    assert main(["logs", "run.txt"]) == 0
    assert drawn_titles == [["ce", "accuracy"]]


def test_all_keys_include_and_ignore_draw_what_is_asked(log_dir, drawn_titles):
    assert main(["logs", "run.txt", "--all_keys", "--out", "all.png"]) == 0
    assert set(drawn_titles[-1]) == {"ce", "steps/sec", "epoch_time(sec)", "model_lr", "total_time(sec)", "accuracy",
                                     "max_accuracy", "since_best_accuracy"}
    assert main(["logs", "run.txt", "--include", "steps/sec", "ce", "--out", "some.png"]) == 0
    assert drawn_titles[-1] == ["steps/sec", "ce"]
    assert main(["logs", "run.txt", "--ignore", "ce", "--out", "metrics.png"]) == 0
    assert drawn_titles[-1] == ["accuracy"]


def test_a_log_of_only_bookkeeping_keys_says_how_to_draw_them(log_dir, capsys):
    (log_dir / "timing.txt").write_text("FastEstimator-Train: step: 2; steps/sec: 600.0;\n"
                                        "FastEstimator-Train: step: 4; steps/sec: 300.0;\n")
    assert main(["logs", "timing.txt"]) == 2
    line = one_line_error(capsys)
    assert line.startswith("fe logs: error: nothing to draw") and "--all_keys" in line
    assert not (log_dir / "history.png").exists()
    assert main(["logs", "timing.txt", "--all_keys"]) == 0


def test_bookkeeping_keys_are_told_apart_from_losses_and_metrics():
    keys = ["ce", "accuracy", "steps/sec", "epoch", "epoch_time(sec)", "total_time(sec)", "model_lr", "model1_lr",
            "logging_interval", "num_device", "since_best_accuracy", "max_accuracy", "min_iou", "f1_score", "dice"]
    assert bookkeeping_keys(keys) == ["steps/sec", "epoch", "epoch_time(sec)", "total_time(sec)", "model_lr",
                                      "model1_lr", "logging_interval", "num_device", "since_best_accuracy",
                                      "max_accuracy"]
