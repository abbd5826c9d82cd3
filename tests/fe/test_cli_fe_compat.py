"""The command line as FastEstimator documents it (issue 28): values become Python objects (`--weights None` is None),
`fe train` only fits, the command functions take the dict FastEstimator passes (`vars(args)`), and
`fe.util.parse_cli_to_dictionary` leaves out a stray value. Scripts here return a recording stand-in for an Estimator,
so no framework runs."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

from fe.cli.logs import logs
from fe.cli.main import main
from fe.cli.run import run
import fe.cli.train as cli_train

SCRIPT = textwrap.dedent('''
    CALLS = []
    ARGUMENTS = {}


    class _Pipeline:
        data = {"train": {"": [1]}, "test": {"": [1]}}


    class _Estimator:
        pipeline = _Pipeline()

        def fit(self, summary=None, warmup=True, eager=False):
            CALLS.append("fit")

        def test(self, summary=None, eager=False):
            CALLS.append("test")


    def get_estimator(base_encoder_weights: str = "encoder.pt", epochs=2, lr: float = 0.1, quick=False, name="run"):
        ARGUMENTS.update(base_encoder_weights=base_encoder_weights, epochs=epochs, lr=lr, quick=quick, name=name)
        return _Estimator()
''')


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A script module on disk, and the module object `fe` loads from it (to read what its functions recorded)."""
    path = tmp_path / "lora_like.py"
    path.write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    from fe.cli import script as script_loading  # pylint: disable=import-outside-toplevel
    loaded: List[Any] = []
    original = script_loading.load_entry_point

    def load(entry_point: str) -> Any:
        module = original(entry_point)
        loaded.append(module)
        return module

    monkeypatch.setattr("fe.cli.train.load_entry_point", load)
    monkeypatch.setattr("fe.cli.run.load_entry_point", load)
    return str(path), loaded


def test_none_numbers_and_booleans_reach_the_script_as_python_values(script: Any) -> None:
    path, loaded = script
    assert main(["train", path, "--base_encoder_weights", "None", "--epochs", "3", "--lr", "1e-3", "--quick",
                 "true"]) == 0
    arguments: Dict[str, Any] = loaded[-1].ARGUMENTS
    assert arguments["base_encoder_weights"] is None  # not the string 'None' (a file named None)
    assert arguments["epochs"] == 3 and arguments["lr"] == 0.001 and arguments["quick"] is True
    assert main(["train", path, "--base_encoder_weights", "null"]) == 0
    assert loaded[-1].ARGUMENTS["base_encoder_weights"] is None


def test_fe_train_only_fits_unless_asked_to_test_too(script: Any) -> None:
    path, loaded = script
    assert main(["train", path]) == 0
    assert loaded[-1].CALLS == ["fit"]  # FastEstimator's train command: test is its own command
    assert main(["train", path, "--then_test"]) == 0
    assert loaded[-1].CALLS == ["fit", "test"]
    assert main(["test", path]) == 0
    assert loaded[-1].CALLS == ["test"]


def test_command_functions_take_the_dict_fastestimator_passes(script: Any, capsys: pytest.CaptureFixture) -> None:
    path, loaded = script
    options = {"entry_point": path, "hyperparameters_json": None}
    assert cli_train.train(options, ["--epochs", "4", "--name", "None"]) == 0
    assert loaded[-1].CALLS == ["fit"] and loaded[-1].ARGUMENTS["epochs"] == 4
    assert loaded[-1].ARGUMENTS["name"] is None
    assert cli_train.train({"entry_point": path, "then_test": True}, None) == 0
    assert loaded[-1].CALLS == ["fit", "test"]
    assert cli_train.test({"entry_point": path}, []) == 0
    assert loaded[-1].CALLS == ["test"]
    assert run({"entry_point": path}, ["--epochs", "1"]) == 0
    assert loaded[-1].CALLS == ["fit", "test"]  # run fits and tests, as FastEstimator's does
    capsys.readouterr()


def test_fe_logs_takes_fastestimators_dict(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    log = tmp_path / "run.txt"
    log.write_text("FastEstimator-Train: step: 1; ce: 2.0;\nFastEstimator-Train: step: 2; ce: 1.0;\n"
                   "FastEstimator-Eval: step: 2; epoch: 1; ce: 1.5;\n")
    out = tmp_path / "history.png"
    assert logs({"log_dir": str(tmp_path), "out": str(out)}, []) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert "Saved the history of 1 log(s)" in capsys.readouterr().out


def test_parse_cli_to_dictionary_leaves_out_a_stray_value() -> None:
    from fe.util.cli_util import parse_cli_to_dictionary  # pylint: disable=import-outside-toplevel
    assert parse_cli_to_dictionary(["stray", "--epochs", "5", "--test", "this", "--lr", "0.74"]) == {
        "epochs": 5, "test": "this", "lr": 0.74}
    assert parse_cli_to_dictionary(["--weights", "None"]) == {"weights": None}


def _parsed_by_run_main(monkeypatch: pytest.MonkeyPatch, target: str, argv: List[str]) -> Any:
    """The (options, unknown) `fe.cli.run_main(argv)` hands the command function `target` (patched to record)."""
    import fe.cli  # pylint: disable=import-outside-toplevel
    calls: List[Any] = []
    monkeypatch.setattr(target, lambda options, unknown: calls.append((options, unknown)) or 0)
    assert fe.cli.run_main(argv) == 0
    (call, ) = calls
    return call


def test_run_main_hands_each_command_the_dict_fastestimators_parser_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    options, unknown = _parsed_by_run_main(monkeypatch, "fe.cli.train.train",
                                           ["train", "entry.py", "--epochs", "3", "--batch_size", "64"])
    assert (options["mode"], options["entry_point"], options["hyperparameters_json"]) == ("train", "entry.py", None)
    assert options["warmup"] is True and options["eager"] is False and options["summary"] is None
    assert unknown == ["--epochs", "3", "--batch_size", "64"]
    options, _ = _parsed_by_run_main(monkeypatch, "fe.cli.train.train",
                                     ["train", "entry.py", "--warmup", "False", "--eager", "true", "--summary", "x"])
    assert options["warmup"] is False and options["eager"] is True and options["summary"] == "x"
    options, unknown = _parsed_by_run_main(monkeypatch, "fe.cli.train.test", ["test", "entry.py", "--other", "200"])
    assert (options["mode"], options["entry_point"], options["hyperparameters_json"]) == ("test", "entry.py", None)
    assert options["eager"] is False and unknown == ["--other", "200"]
    options, _ = _parsed_by_run_main(monkeypatch, "fe.cli.run.run", ["run", "entry.py"])
    assert (options["mode"], options["entry_point"]) == ("run", "entry.py")
    options, unknown = _parsed_by_run_main(monkeypatch, "fe.cli.logs.logs", ["logs", "logs_dir", "-b", "-v"])
    assert (options["mode"], options["log_dir"], options["recursive"], options["ignore"]) == (
        "logs", "logs_dir", False, None)
    assert (options["smooth"], options["pretty_names"], options["share_legend"]) == (1, False, True)
    assert (options["save"], options["save_dir"], unknown) == (False, None, ["-b", "-v"])
    options, _ = _parsed_by_run_main(monkeypatch, "fe.cli.logs.logs", ["logs", "a.txt", "b.txt", "--save", "out"])
    assert (options["log_dir"], options["save"], options["save_dir"]) == (["a.txt", "b.txt"], True, "out")
    options, _ = _parsed_by_run_main(monkeypatch, "fe.cli.logs.logs", ["logs", "a.txt", "--save"])
    assert (options["save"], options["save_dir"]) == (True, None)


def test_the_parsed_flags_reach_fit_as_booleans(script: Any, capsys: pytest.CaptureFixture) -> None:
    path, loaded = script
    loaded_script = SCRIPT.replace('CALLS.append("fit")', 'CALLS.append(("fit", warmup, eager))')
    Path(path).write_text(loaded_script)
    assert main(["train", path, "--warmup", "false", "--eager", "TRUE"]) == 0
    assert loaded[-1].CALLS == [("fit", False, True)]
    assert main(["train", path, "--warmup", "maybe"]) == 2
    assert "--warmup: must be true or false, got 'maybe'" in capsys.readouterr().err
