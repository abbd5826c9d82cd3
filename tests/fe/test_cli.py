"""The `fe` command: `fe train` / `fe test` run a script's get_estimator like FastEstimator's CLI, `fe logs` draws
saved logs, and usage mistakes are one line on stderr with exit code 2."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import fe.examples.digits_torch_mlp as torch_mlp_example
from fe.cli.errors import CLIError
from fe.cli.hyperparameters import check_arguments, parse_cli_to_dictionary, parse_value
from fe.cli.main import main
from fe_helpers import run_fe, run_python

EXAMPLE = Path(torch_mlp_example.__file__)
QUICK = ["--epochs", "1", "--train_steps_per_epoch", "8", "--eval_steps_per_epoch", "2", "--log_steps", "4"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# ---------------------------------------------------------------- argument parsing (in process)
@pytest.mark.parametrize("text, value", [("2", 2), ("0.5", 0.5), ("1e-3", 0.001), ("true", True), ("False", False),
                                         ("null", None), ("None", None), ("[32, 64]", [32, 64]), ("(1, 2)", (1, 2)),
                                         ('{"a": 1}', {"a": 1}), ("adam", "adam"), ("/tmp/x.pt", "/tmp/x.pt")])
def test_values_are_parsed_as_json_or_python_literals(text, value):
    assert parse_value(text) == value


def test_key_value_pairs_become_keyword_arguments():
    assert parse_cli_to_dictionary(["--epochs", "2", "--lr=1e-3", "--batch-size", "64", "--flag", "--sizes", "1",
                                    "2"]) == {"epochs": 2, "lr": 0.001, "batch_size": 64, "flag": True, "sizes": [1, 2]}


@pytest.mark.parametrize("tokens, message", [(["5"], "unexpected argument '5'"), (["--"], "invalid argument '--'"),
                                             (["--a", "1", "--a", "2"], "--a is given twice")])
def test_malformed_arguments_are_cli_errors(tokens, message):
    with pytest.raises(CLIError, match=message):
        parse_cli_to_dictionary(tokens)


def test_only_arguments_get_estimator_accepts_are_allowed():
    def get_estimator(epochs=2, batch_size=32):
        return epochs, batch_size

    check_arguments(get_estimator, {"epochs": 1}, "get_estimator()")
    with pytest.raises(CLIError, match=r"does not accept --lr \(it accepts: --epochs, --batch_size\)"):
        check_arguments(get_estimator, {"epochs": 1, "lr": 0.1}, "get_estimator()")
    check_arguments(lambda epochs=1, **kwargs: None, {"lr": 0.1}, "get_estimator()")  # **kwargs takes anything
    with pytest.raises(CLIError, match="needs --data_dir"):
        check_arguments(lambda data_dir, epochs=1: None, {"epochs": 1}, "get_estimator()")


def test_main_returns_2_and_prints_one_line_for_usage_errors(capsys, tmp_path):
    assert main([]) == 2
    assert main(["train"]) == 2
    assert main(["train", str(tmp_path / "missing.py")]) == 2
    assert main(["fly"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 4
    assert "no such file" in errors[2] and "missing.py" in errors[2]
    assert errors[3].startswith("fe: error: argument COMMAND: invalid choice: 'fly'")


# ---------------------------------------------------------------- fe train / fe test (subprocess)
@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One `fe train --then_test` of the example (the quick settings, batch 16) that the tests below read: its
    output, and the folder of its saved model (one training run instead of one per test: CI time)."""
    save_dir = tmp_path_factory.mktemp("trained")
    result = run_fe(["train", str(EXAMPLE), *QUICK, "--batch_size", "16", "--save_dir", str(save_dir), "--then_test"])
    return result, save_dir


def test_fe_train_with_then_test_fits_then_tests_an_example_script(trained):
    result, save_dir = trained
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FastEstimator-Start: step: 1;" in result.stdout
    assert "FastEstimator-Train: step: 8; epoch: 1;" in result.stdout
    assert "FastEstimator-Eval: step: 8; epoch: 1; accuracy:" in result.stdout
    assert "FastEstimator-Test: step: 8; epoch: 1; accuracy:" in result.stdout
    assert (save_dir / "model_best_accuracy.pt").is_file()


def test_fe_train_takes_a_module_name_and_a_hyperparameters_file(tmp_path):
    hyperparameters = tmp_path / "hp.json"
    hyperparameters.write_text(json.dumps({"epochs": 3, "train_steps_per_epoch": 4, "eval_steps_per_epoch": 1,
                                           "save_dir": str(tmp_path / "models")}))
    result = run_fe(["train", "fe.examples.digits_torch_mlp", "--hyperparameters", str(hyperparameters),
                     "--epochs", "1"])  # the command line wins over the file
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FastEstimator-Train: step: 4; epoch: 1;" in result.stdout
    assert "epoch: 2" not in result.stdout
    assert "FastEstimator-Test" not in result.stdout  # fe train only fits, as FastEstimator's train command does


def test_fe_test_only_tests_and_reproduces_saved_weights(trained, tmp_path):
    result, save_dir = trained
    assert result.returncode == 0, result.stderr
    test_line = [line for line in result.stdout.splitlines() if line.startswith("FastEstimator-Test")][0]
    tested = run_fe(["test", str(EXAMPLE), "--weights_path", str(save_dir / "model_best_accuracy.pt"),
                     "--save_dir", str(tmp_path / "unused")])
    assert tested.returncode == 0, tested.stderr
    assert "FastEstimator-Train" not in tested.stdout and "FastEstimator-Eval" not in tested.stdout
    accuracy = test_line.split("accuracy: ")[1].split(";")[0]
    assert f"accuracy: {accuracy};" in tested.stdout


def test_a_script_without_get_estimator_is_a_one_line_error(tmp_path):
    script = tmp_path / "not_a_model.py"
    script.write_text("VALUE = 1\n")
    assert_one_line_error(run_fe(["train", str(script)]), "fe train: error:", "not_a_model.py",
                          "defines no get_estimator()")


def test_an_unknown_argument_is_a_one_line_error_listing_the_accepted_ones():
    result = run_fe(["train", str(EXAMPLE), "--epochz", "2"])
    assert_one_line_error(result, "fe train: error:", "does not accept --epochz", "--epochs", "--batch_size")
    assert "FastEstimator" not in result.stdout  # nothing ran


def test_a_bad_hyperparameters_file_and_a_missing_script_are_one_line_errors(tmp_path):
    bad = tmp_path / "hp.json"
    bad.write_text("{epochs: 2")
    assert_one_line_error(run_fe(["test", str(EXAMPLE), "--hyperparameters", str(bad)]), "is not valid JSON")
    assert_one_line_error(run_fe(["train", "no_such_module_here"]), "no such file or module: 'no_such_module_here'")


def test_an_example_runs_as_a_module_with_arguments(tmp_path):
    result = run_python(textwrap.dedent(f"""
        import runpy, sys
        sys.argv = ["digits_torch_mlp", "--epochs", "1", "--train_steps_per_epoch", "3", "--eval_steps_per_epoch",
                    "1", "--save_dir", {str(tmp_path)!r}]
        runpy.run_module("fe.examples.digits_torch_mlp", run_name="__main__")
    """))
    assert result.returncode == 0, result.stderr
    assert "FastEstimator-Test: step: 3; epoch: 1; accuracy:" in result.stdout
    bad = run_python("import runpy, sys; sys.argv = ['x', '--nope', '1']; "
                     "runpy.run_module('fe.examples.digits_torch_mlp', run_name='__main__')")
    assert_one_line_error(bad, "python -m fe.examples.digits_torch_mlp: error:", "does not accept --nope")


# ---------------------------------------------------------------- fe logs
def test_fe_logs_draws_saved_logs_into_a_png(trained, tmp_path):
    result, _ = trained
    assert result.returncode == 0, result.stderr
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run_1.txt").write_text(result.stdout)
    (logs / "run_2.txt").write_text(result.stdout.replace("ce: ", "ce: 1"))
    out = tmp_path / "plots" / "history.png"
    result = run_fe(["logs", str(logs), "--out", str(out), "--include", "ce", "accuracy"])
    assert result.returncode == 0, result.stderr
    assert "Saved the history of 2 log(s)" in result.stdout
    assert out.read_bytes()[:8] == PNG_MAGIC
    single = run_fe(["logs", str(logs / "run_1.txt"), "--out", str(tmp_path / "one.png")])
    assert single.returncode == 0, single.stderr
    assert (tmp_path / "one.png").read_bytes()[:8] == PNG_MAGIC


def test_fe_logs_errors_are_one_line(tmp_path):
    assert_one_line_error(run_fe(["logs", str(tmp_path)]), "fe logs: error:", "no log files ending with '.txt'")
    (tmp_path / "run.txt").write_text("FastEstimator-Train: step: 1; ce: 1.0;\n")
    assert_one_line_error(run_fe(["logs", str(tmp_path), "--include", "accuracy"]),
                          "No plottable values for key(s) ['accuracy']")
    assert_one_line_error(run_fe(["logs", str(tmp_path), "--colour", "red"]), "unrecognized arguments: --colour red")


def test_a_script_named_like_a_loaded_module_does_not_replace_it(tmp_path):
    import json
    import sys

    from fe.cli.script import find_get_estimator, load_entry_point
    script = tmp_path / "json.py"
    script.write_text("def get_estimator(epochs=1):\n    return epochs\n")
    module = load_entry_point(str(script))
    assert sys.modules["json"] is json
    assert module.__name__ == "fe_script_json"
    assert find_get_estimator(module, str(script))(epochs=3) == 3
