"""`fe history`, `fe run`, `fe plot` and the FastEstimator flags of `fe logs` (in process, through fe.cli.main)."""
from __future__ import annotations

import sqlite3
import textwrap

import pytest

import fe.examples.digits_torch_mlp as torch_mlp_example
from fe.cli.main import main, run_main
from fe_core.search import GridSearch
from fe_core.summary import history

QUICK = ["--epochs", "1", "--train_steps_per_epoch", "4", "--eval_steps_per_epoch", "1", "--log_steps", "2"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    path = tmp_path / "history.db"
    monkeypatch.setenv("FE_HISTORY_DB", str(path))
    monkeypatch.setattr(history, "_location", True)
    return path


def count(db_path, query="SELECT COUNT(*) FROM history"):
    with sqlite3.connect(db_path) as connection:
        return connection.execute(query).fetchone()[0]


@pytest.mark.slow
def test_fe_train_is_recorded_and_fe_history_lists_queries_and_clears_it(db_path, tmp_path, capsys):
    assert main(["train", torch_mlp_example.__file__, *QUICK, "--save_dir", str(tmp_path), "--summary", "cli_run"]) == 0
    capsys.readouterr()
    assert main(["history", "--csv", "--traces", "--network", "--args"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    assert header.split(",") == ["experiment", "status", "file", "args", "start", "completed", "fe_version",
                                 "network", "traces"]
    assert row.startswith("cli_run,Completed,digits_torch_mlp.py,")
    assert "ModelOp, CrossEntropy, UpdateOp" in row and "Accuracy" in row
    assert main(["history", "sql", "SELECT experiment, status FROM history WHERE status = 'Completed'"]) == 0
    assert "| cli_run    | Completed |" in capsys.readouterr().out
    assert main(["history", "--errors"]) == 0
    assert "cli_run" not in capsys.readouterr().out  # nothing failed
    assert main(["history", "settings", "--keep", "5", "--keep_logs", "2"]) == 0
    assert "n_keep = 5, n_keep_logs = 2" in capsys.readouterr().out
    assert main(["history", "clear", "0"]) == 0
    assert count(db_path) == 0 and count(db_path, "SELECT COUNT(*) FROM logs") == 0


def test_fe_history_usage_errors_are_one_line(db_path, capsys):
    assert main(["history", "--limit", "x"]) == 2
    assert main(["history", "sql", "SELEC nothing"]) == 2
    assert main(["history", "clear", "-3"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("fe history: error:") for line in errors)
    assert "syntax error" in errors[1] and "n_keep" in errors[2]


def test_fe_history_interactive_shows_a_log(db_path, monkeypatch, capsys):
    connection = history.connect()
    with connection:
        connection.execute("INSERT INTO history (pk, experiment, status, train_start) VALUES (7, 'x', 'Failed', 't')")
        connection.execute("INSERT INTO logs (log, fk) VALUES ('the printed log', 7)")
        connection.execute("INSERT INTO errors (exc_type, exc_tb, fk) VALUES ('KeyError', 'Traceback...', 7)")
    connection.close()
    answers = iter(["1", "exit"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    assert main(["history", "--interactive", "--errors"]) == 0
    out = capsys.readouterr().out
    assert "KeyError" in out and "the printed log" in out and "Traceback..." in out


def test_fe_run_calls_fastestimator_run_with_the_arguments(tmp_path, capsys):
    script = tmp_path / "runner.py"
    script.write_text(textwrap.dedent("""
        def fastestimator_run(epochs=1, name="x"):
            print(f"ran {epochs} {name}")
    """))
    hyperparameters = tmp_path / "hp.json"
    hyperparameters.write_text('{"epochs": 3, "name": "file"}')
    assert run_main(["run", str(script), "--hyperparameters", str(hyperparameters), "--name", "cli"]) == 0
    assert "ran 3 cli" in capsys.readouterr().out
    assert main(["run", str(script), "--bogus", "1"]) == 2
    assert "does not accept --bogus" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    assert main(["run", str(empty)]) == 2
    assert "neither fastestimator_run() nor get_estimator()" in capsys.readouterr().err


def test_fe_plot_saves_a_search_as_html(tmp_path, capsys):
    search = GridSearch(eval_fn=lambda search_idx, lr, bs: {"acc": lr * bs}, params={"lr": [1, 2], "bs": [3, 4]},
                        name="grid")
    search.fit()
    search.save(str(tmp_path))
    capsys.readouterr()
    assert main(["plot", str(tmp_path / "grid.json")]) == 0  # heatmap, saved next to the file
    assert "heatmap" in (tmp_path / "grid.html").read_text()
    assert main(["plot", str(tmp_path / "grid.json"), "--draw", "parallel", "--color_by", "lr", "--save",
                 str(tmp_path / "p.html")]) == 0
    assert "parcoords" in (tmp_path / "p.html").read_text()
    assert main(["plot", str(tmp_path / "grid.json"), "--draw", "cartesian"]) == 2
    assert "exactly 1 parameter" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "missing.json")]) == 2


def test_fe_logs_save_and_group(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, ce in (("a_1.txt", 1.0), ("a_2.txt", 2.0), ("b_1.txt", 4.0)):
        (logs / name).write_text(f"FastEstimator-Train: step: 1; ce: {ce};\nFastEstimator-Train: step: 2; ce: {ce};\n")
    assert main(["logs", str(logs), "--save", "--group", r"(.*)_\d+\.txt", "--split_legend"]) == 0
    assert (logs / "parse_logs.png").read_bytes()[:8] == PNG_MAGIC
    assert "Saved the history of 3 log(s)" in capsys.readouterr().out
    assert main(["logs", str(logs), "--group", r"^a_"]) == 2
    assert "does not match the group_by pattern" in capsys.readouterr().err
