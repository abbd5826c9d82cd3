"""`fe train/test/run SCRIPT --help` lists the script's own get_estimator arguments (types, defaults, docstring
descriptions), and a value of the wrong type is a one-line usage error naming the argument and the expected type
(in process, through fe.cli.main; nothing is trained)."""
from __future__ import annotations

import textwrap

import pytest

import fe.examples.digits_torch_mlp as torch_mlp_example
from fe.cli.errors import CLIError
from fe.cli.main import main
from fe.cli.script_arguments import convert_arguments, docstring_arguments, script_parameters
from fe.cli.train import run_main

EXAMPLE = "fe.examples.digits_torch_mlp"


def help_text(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def one_line_error(capsys):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("command", ["train", "test", "run"])
def test_script_help_lists_the_script_arguments_with_types_defaults_and_descriptions(command, capsys):
    text = help_text([command, EXAMPLE, "--help"], capsys)
    assert f"arguments of {EXAMPLE} (--name value):" in text
    lines = text.splitlines()
    epochs = [line for line in lines if line.strip().startswith("--epochs int")]
    assert epochs and "--epochs int" in epochs[0] and "Training epochs. (default: 20)" in epochs[0]
    assert "--save_dir str" in text and "(default: 'fe_runs/digits_torch_mlp')" in text
    assert "--train_steps_per_epoch Optional[int]" in text
    joined = " ".join(text.split())
    assert "Cut training epochs to this many steps (None: the whole training set). (default: None)" in joined
    assert "--hyperparameters JSON_FILE" in text  # the command's own options are still there


def test_help_without_a_script_says_how_to_list_its_arguments(capsys):
    text = help_text(["train", "--help"], capsys)
    assert "fe COMMAND SCRIPT --help" in text
    assert "--epochs" in text  # the generic hint about --name value pairs (e.g. --epochs 2)


def test_help_of_a_script_without_annotations_or_docstring(tmp_path, capsys):
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent('''
        def get_estimator(data_dir, epochs=3, lr=1e-3, name="run", **kwargs):
            return None
    '''))
    text = help_text(["test", str(script), "-h"], capsys)
    assert "--data_dir VALUE" in text and "(required)" in text
    assert "--epochs int" in text and "(default: 3)" in text
    assert "--lr float" in text and "--name str" in text and "(default: 'run')" in text
    assert "it takes **kwargs" in text


def test_fe_run_help_lists_fastestimator_run_arguments(tmp_path, capsys):
    script = tmp_path / "runner.py"
    script.write_text(textwrap.dedent('''
        def fastestimator_run(trials: int = 4):
            """Run a search.

            Args:
                trials: How many trials
                    to run.
            """
    '''))
    text = help_text(["run", str(script), "--help"], capsys)
    assert "fastestimator_run() arguments of" in text
    assert "--trials int" in text and "How many trials to run. (default: 4)" in " ".join(text.split())


@pytest.mark.parametrize("argv, expected", [
    (["--epochs", "two"], "argument --epochs: expected int, got 'two'"),
    (["--epochs", "2.5"], "argument --epochs: expected int, got '2.5'"),
    (["--batch_size"], "argument --batch_size: expected int, got True"),
    (["--train_steps_per_epoch", "many"], "argument --train_steps_per_epoch: expected int or None, got 'many'"),
])
def test_a_value_of_the_wrong_type_is_a_one_line_usage_error(argv, expected, capsys):
    assert main(["train", EXAMPLE, *argv]) == 2
    line = one_line_error(capsys)
    assert line.startswith(f"fe train: error: {expected}"), line
    assert "get_estimator() in fe.examples.digits_torch_mlp declares" in line
    assert "FastEstimator" not in capsys.readouterr().out  # nothing ran


def test_fe_test_and_fe_run_check_types_too(tmp_path, capsys):
    assert main(["test", EXAMPLE, "--log_steps", "often"]) == 2
    assert "argument --log_steps: expected int, got 'often'" in one_line_error(capsys)
    script = tmp_path / "runner.py"
    script.write_text("def fastestimator_run(trials: int = 4):\n    print('ran', trials)\n")
    assert main(["run", str(script), "--trials", "four"]) == 2
    assert "fe run: error: argument --trials: expected int, got 'four'" in one_line_error(capsys)
    assert main(["run", str(script), "--trials", "5"]) == 0
    assert capsys.readouterr().out == "ran 5\n"


def test_an_example_run_as_a_module_reports_wrong_types_and_shows_help(capsys):
    prog = "python -m fe.examples.digits_torch_mlp"
    assert run_main(torch_mlp_example.get_estimator, ["--epochs", "two"], prog=prog) == 2
    assert one_line_error(capsys).startswith(f"{prog}: error: argument --epochs: expected int, got 'two'")
    assert run_main(torch_mlp_example.get_estimator, ["--help"], prog=prog) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: {prog}") and "--epochs int" in text and "(default: 20)" in text


def test_values_are_converted_to_what_the_parameters_declare():
    def get_estimator(epochs: int = 2, lr: float = 0.1, name: str = "run", tag="a", sizes: "list" = None,
                      anything=None, strict: bool = False):
        return epochs, lr, name, tag, sizes, anything, strict

    arguments = {"epochs": 3, "lr": 1, "name": 7, "tag": None, "sizes": [1, 2], "anything": "x", "strict": True}
    raw = {"epochs": "3", "lr": "1", "name": "007", "tag": "None", "sizes": ["1", "2"], "anything": "x",
           "strict": "true"}
    converted = convert_arguments(get_estimator, arguments, raw, "get_estimator()")
    # text parameters get the text as typed, but None stays None (as FastEstimator passes it); ints pass for floats;
    # untyped None default accepts anything
    assert converted == {"epochs": 3, "lr": 1, "name": "007", "tag": None, "sizes": [1, 2], "anything": "x",
                         "strict": True}
    with pytest.raises(CLIError, match=r"argument --strict: expected bool, got '1'"):
        convert_arguments(get_estimator, {"strict": 1}, {"strict": "1"}, "get_estimator()")
    with pytest.raises(CLIError, match=r"argument --name: expected str, got 5 "):
        convert_arguments(get_estimator, {"name": 5}, {}, "get_estimator()")


def test_unresolvable_annotations_are_not_checked_and_docstrings_are_read():
    def get_estimator(model: "SomeTypeOnlyImportedForTypeCheckers" = None, steps: "Optional[int]" = None):
        """Make it.

        Args:
            model (SomeType): The model
                to use.
            steps: Steps.

        Returns:
            An Estimator.
        """

    parameters = {parameter.name: parameter for parameter in script_parameters(get_estimator)[0]}
    assert parameters["model"].allowed is None
    assert parameters["steps"].allowed == (int, type(None))
    assert docstring_arguments(get_estimator) == {"model": "The model to use.", "steps": "Steps."}
    assert convert_arguments(get_estimator, {"model": "resnet", "steps": None}, {}, "g") == {"model": "resnet",
                                                                                            "steps": None}
