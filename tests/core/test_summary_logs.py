"""Reading FastEstimator-format logs back into Summaries (fe_core.summary.logs), and the plot module's behaviour
without matplotlib (this suite has no matplotlib; tests/fe draws real images)."""
import math
import sys

import numpy as np
import pytest

from fe_core.data import Data
from fe_core.summary import plot
from fe_core.summary.logs import (find_log_files, parse_log_dir, parse_log_file, parse_log_files, parse_log_text,
                                  parse_log_value)
from fe_core.summary.summary import Summary, ValWithError
from fe_core.summary.system import System
from fe_core.trace import Logger

LOG = """\
FastEstimator-Start: step: 1; logging_interval: 20; num_device: 0;
FastEstimator-Train: step: 1; ce: 2.3025851; steps/sec: 7.1;
FastEstimator-Train: step: 20; ce: 0.73; steps/sec: 110.5;
FastEstimator-Train: step: 40; epoch: 1; epoch_time(sec): 0.61;
Eval Progress: 1/9;
FastEstimator-Eval: step: 40; epoch: 1; accuracy: 0.9; ce: 0.35; max_accuracy: 0.9; since_best_accuracy: 0;
FastEstimator-Finish: step: 40; model_lr: 1e-03; total_time(sec): 2.0;
FastEstimator-Test: step: 40; epoch: 1; accuracy: 0.95; ce: 0.2;
"""


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("text, expected", [
    ("20", 20),
    ("-3", -3),
    ("0.73", 0.73),
    ("1e-03", 0.001),
    ("-1.5E+02", -150.0),
    (".5", 0.5),
    ("(0.1, 0.2, 0.3)", ValWithError(0.1, 0.2, 0.3)),
])
def test_numbers_are_parsed_to_int_float_or_val_with_error(text, expected):
    value = parse_log_value(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf"])
def test_non_finite_floats_are_kept(text):
    value = parse_log_value(text)
    assert isinstance(value, float) and not math.isfinite(value)


@pytest.mark.parametrize("text", ["None", "adam", "True?", "(a, b, c)", ""])
def test_non_numbers_are_none(text):
    assert parse_log_value(text) is None


@pytest.mark.parametrize("text", ["[[1,2],\n [3,4]]", "[[1 2]\n [3 4]]"])
def test_printed_arrays_become_numpy_arrays(text):
    np.testing.assert_array_equal(parse_log_value(text), [[1, 2], [3, 4]])


# ---------------------------------------------------------------- lines
def test_every_mode_key_and_step_is_recorded_with_numbers():
    summary = parse_log_text(LOG, name="run")
    assert summary.name == "run"
    assert summary.history["train"]["ce"] == {1: 2.3025851, 20: 0.73}
    assert summary.history["train"]["steps/sec"] == {1: 7.1, 20: 110.5}
    assert summary.history["train"]["epoch"] == {40: 1}
    assert summary.history["train"]["epoch_time(sec)"] == {40: 0.61}
    assert summary.history["eval"]["accuracy"] == {40: 0.9}
    assert summary.history["eval"]["since_best_accuracy"] == {40: 0}
    assert summary.history["test"]["accuracy"] == {40: 0.95}
    assert isinstance(summary.history["eval"]["since_best_accuracy"][40], int)


def test_finish_values_are_train_values_and_start_and_progress_lines_are_skipped():
    summary = parse_log_text(LOG)
    assert summary.history["train"]["model_lr"] == {40: 0.001}
    assert summary.history["train"]["total_time(sec)"] == {40: 2.0}
    assert "logging_interval" not in summary.history["train"]
    assert set(summary.history) == {"train", "eval", "test"}


def test_lines_with_a_prefix_and_other_output_are_handled():
    text = ("2024-01-01 12:00:00 INFO FastEstimator-Train: step: 5; ce: 1.5;\n"
            "Epoch 1: some progress bar ====>\n"
            "WARNING: something; with: colons;\n"
            "[stdout] FastEstimator-Eval: step: 5; epoch: 1; ce: 1.2;\n")
    summary = parse_log_text(text)
    assert summary.history["train"]["ce"] == {5: 1.5}
    assert summary.history["eval"]["ce"] == {5: 1.2}
    assert "with" not in summary.history["train"]


def test_val_with_error_and_non_numeric_values():
    summary = parse_log_text("FastEstimator-Test: step: 9; acc: (0.9, 0.92, 0.95); note: hello; lr: None;")
    assert summary.history["test"]["acc"] == {9: ValWithError(0.9, 0.92, 0.95)}
    assert "note" not in summary.history["test"] and "lr" not in summary.history["test"]


def test_array_blocks_after_a_line_are_recorded_at_its_mode_and_step():
    text = ("FastEstimator-Eval: step: 40; epoch: 1; accuracy: 0.5;\n"
            "confusion_matrix:\n[[1,2],\n [3,4]];\n"
            "other:\n[0.5,0.25];\n"
            "FastEstimator-Train: step: 60; ce: 0.1;\n")
    summary = parse_log_text(text)
    np.testing.assert_array_equal(summary.history["eval"]["confusion_matrix"][40], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(summary.history["eval"]["other"][40], [0.5, 0.25])
    assert summary.history["train"]["ce"] == {60: 0.1}


def test_a_header_like_line_not_followed_by_an_array_does_not_swallow_log_lines():
    text = ("FastEstimator-Train: step: 1; ce: 1.0;\n"
            "Note:\n"
            "FastEstimator-Train: step: 2; ce: 0.5;\n")
    assert parse_log_text(text).history["train"]["ce"] == {1: 1.0, 2: 0.5}


def test_a_test_line_without_a_step_uses_the_previous_step_and_epoch():
    text = ("FastEstimator-Eval: step: 80; epoch: 2; ce: 0.4;\n"
            "FastEstimator-Test: step: None; epoch: 0; accuracy: 0.9;\n")
    summary = parse_log_text(text)
    assert summary.history["test"]["accuracy"] == {80: 0.9}
    assert summary.history["test"]["epoch"] == {80: 2}


def test_a_log_line_without_its_step_first_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("FastEstimator-Train: step: 1; ce: 1.0;\nFastEstimator-Train: ce: 0.5; step: 2;\n")
    with pytest.raises(ValueError, match=r"bad\.txt, line 2: .*must start with 'step: N;'"):
        parse_log_file(str(path))


def test_logger_output_parses_back_to_what_the_logger_recorded(capsys):
    """Round trip: the Logger's printed lines carry the same history it writes into the Summary."""
    system = System(network=None, pipeline=None, traces=[], mode="train", num_devices=0, log_steps=2, total_epochs=1)
    system.summary = Summary("exp")
    system.eval_log_steps = ([], 0)
    logger = Logger()
    logger.system = system
    for step, ce in ((1, 2.5), (2, 1.25), (4, 0.5)):
        system.global_step = step
        data = Data()
        data.write_with_log("ce", np.float32(ce))
        logger.on_batch_end(data)
    system.epoch_idx = 1
    epoch_data = Data()
    epoch_data.write_with_log("epoch_time(sec)", 0.25)
    logger.on_epoch_end(epoch_data)
    system.mode = "eval"
    eval_data = Data()
    eval_data.write_with_log("accuracy", 0.875)
    eval_data.write_with_log("confusion_matrix", np.array([[3, 1], [0, 4]]))
    logger.on_epoch_end(eval_data)
    parsed = parse_log_text(capsys.readouterr().out)
    for mode in ("train", "eval"):
        assert set(parsed.history[mode]) == set(system.summary.history[mode])
        for key, steps in system.summary.history[mode].items():
            assert set(parsed.history[mode][key]) == set(steps)
            for step, value in steps.items():
                np.testing.assert_allclose(parsed.history[mode][key][step], np.asarray(value, dtype=float))


# ---------------------------------------------------------------- files and directories
def test_a_file_becomes_a_summary_named_after_it(tmp_path):
    path = tmp_path / "mnist_run.txt"
    path.write_text(LOG)
    summary = parse_log_file(str(path))
    assert summary.name == "mnist_run"
    assert summary.history["eval"]["ce"] == {40: 0.35}
    assert parse_log_file(str(path), None).name == "mnist_run"
    assert parse_log_file(str(path), ".log").name == "mnist_run.txt"


def test_directories_are_searched_in_natural_order(tmp_path):
    for name in ("run_10.txt", "run_2.txt", "notes.md"):
        (tmp_path / name).write_text(LOG)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run_1.txt").write_text(LOG)
    assert [p.rsplit("/", 1)[-1] for p in find_log_files(str(tmp_path))] == ["run_2.txt", "run_10.txt"]
    assert [s.name for s in parse_log_dir(str(tmp_path))] == ["run_2", "run_10"]
    assert sorted(s.name for s in parse_log_dir(str(tmp_path), recursive_search=True)) == ["run_1", "run_10", "run_2"]
    assert [s.name for s in parse_log_dir(str(tmp_path), log_extension=".md")] == ["notes"]


def test_missing_directories_and_empty_ones_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        parse_log_dir(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=r"No log files ending with '\.txt'"):
        parse_log_dir(str(tmp_path))
    with pytest.raises(ValueError, match="at least one log file"):
        parse_log_files([])


# ---------------------------------------------------------------- plotting without matplotlib
def test_plottable_keys_lists_scalar_keys_without_needing_matplotlib():
    summary = parse_log_text(LOG + "FastEstimator-Eval: step: 60; epoch: 2; cm: 1;\ncm2:\n[[1,2],[3,4]];\n")
    keys = plot.plottable_keys(summary)
    assert keys[:2] == ["ce", "steps/sec"]
    assert "accuracy" in keys and "cm" in keys and "cm2" not in keys


@pytest.mark.parametrize("draw", [
    lambda s, path: plot.plot_summaries(s, path),
    lambda s, path: plot.plot_logs(s),
    lambda s, path: plot.visualize_logs(s, save_path=path),
])
def test_drawing_without_matplotlib_says_how_to_install_it(monkeypatch, tmp_path, draw):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import matplotlib...` raise ImportError
    with pytest.raises(ImportError, match=r"needs matplotlib.*pip install matplotlib"):
        draw(parse_log_text(LOG, name="run"), str(tmp_path / "history.png"))
    assert not (tmp_path / "history.png").exists()


def test_fe_core_modules_import_no_matplotlib():
    import subprocess
    code = ("import sys, fe_core.summary.logs, fe_core.summary.plot; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
