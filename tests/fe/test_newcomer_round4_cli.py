"""The `fe` command as a newcomer meets it (issue 37 items 6, 7, 11; issue 36 item 11): Ctrl-C and SIGTERM in
`fe train` end with the one `FastEstimator-Interrupted` line and exit codes 130 / 143 (the run history says
'Aborted', not 'Launched'), `--then_test` says why it does not test, and the command functions take the dict
FastEstimator's `run_main` passes."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, List

import pytest

from fe_helpers import ROOT, child_env

# A torch run that stops in step 3 of a long epoch and waits there (the test then signals it).
SCRIPT = textwrap.dedent('''
    import os, time
    import numpy as np
    import torch
    import fe
    from fe.op.tensorop.loss import CrossEntropy
    from fe.op.tensorop.model import ModelOp, UpdateOp
    from fe.trace import Trace


    class WaitAtStep3(Trace):
        def on_batch_end(self, data):
            if self.system.global_step == 3:
                open(os.environ["READY_FILE"], "w").close()
                time.sleep(60)


    def get_estimator(epochs=1, with_test=True):
        x = np.random.default_rng(0).normal(size=(400, 4)).astype("float32")
        y = (x[:, 0] > 0).astype("int64")
        data = fe.dataset.NumpyDataset({"x": x, "y": y})
        pipeline = fe.Pipeline(train_data=data, test_data=data if with_test else None, batch_size=4, num_process=0)
        model = fe.build(lambda: torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(-1)), "adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        traces = [WaitAtStep3()] if os.environ.get("READY_FILE") else []
        return fe.Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=1,
                            train_steps_per_epoch=None if traces else 2)
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("newcomer4") / "wait_script.py"
    path.write_text(SCRIPT)
    return path


def fe_command() -> List[str]:
    console = Path(sys.executable).parent / "fe"
    return [str(console)] if console.exists() else [sys.executable, "-m", "fe.cli"]


def signalled_run(script: Path, tmp_path: Path, signum: int) -> Any:
    """`fe train script` stopped by `signum` in step 3; returns (exit code, stdout, stderr, history status)."""
    ready, database = tmp_path / "ready", tmp_path / "history.db"
    env = dict(child_env(), READY_FILE=str(ready), FE_HISTORY_DB=str(database))
    # A command typed at a terminal starts with SIGINT at its default; a test run started in the background by a
    # non-interactive shell (CI launched with `&`) hands its children SIGINT ignored, so Ctrl-C would never arrive.
    process = subprocess.Popen([*fe_command(), "train", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, cwd=tmp_path,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 240
        while not ready.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the run never reached step 3"
            time.sleep(0.1)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    with sqlite3.connect(database) as db:
        statuses = [row[0] for row in db.execute("SELECT status FROM history")]
    return process.returncode, out, err, statuses


def check_one_line(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert lines[-1].startswith("FastEstimator-Interrupted: step 3 (train epoch 1)"), err


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_ctrl_c_in_fe_train_prints_one_line_and_exits_130(script: Path, tmp_path: Path) -> None:
    code, _, err, statuses = signalled_run(script, tmp_path, signal.SIGINT)
    assert code == 130, err
    check_one_line(err)
    assert statuses == ["Aborted"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_sigterm_in_fe_train_is_an_interruption_recorded_in_history_and_exits_143(script: Path,
                                                                                  tmp_path: Path) -> None:
    code, _, err, statuses = signalled_run(script, tmp_path, signal.SIGTERM)
    assert code == 143, err
    check_one_line(err)
    assert statuses == ["Aborted"]  # not 'Launched' forever


def test_then_test_without_test_data_says_so_in_one_line(script: Path, capsys: pytest.CaptureFixture) -> None:
    from fe.cli.main import main  # pylint: disable=import-outside-toplevel
    from fe.estimator import record_history  # pylint: disable=import-outside-toplevel
    record_history(False)
    try:
        assert main(["train", str(script), "--with_test", "False", "--then_test"]) == 0
    finally:
        record_history(True)
    err = capsys.readouterr().err
    assert err.count("no test data") == 1 and "fe train: not testing" in err, err


def test_command_functions_take_fastestimators_whole_dict(script: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    """What FastEstimator's run_main passes: vars(args) of its parser, 'mode' and 'func' included, with its flag
    values as its parser leaves them ('true' / 'false' strings, or booleans)."""
    from fe.cli import train as cli_train  # pylint: disable=import-outside-toplevel
    calls: List[Any] = []

    class Recording:
        pipeline = type("P", (), {"data": {"train": {}, "test": {}}})()

        def fit(self, summary=None, warmup=True, eager=False):
            calls.append(("fit", summary, warmup, eager))

        def test(self, summary=None, eager=False):
            calls.append(("test", summary, eager))

    monkeypatch.setattr(cli_train, "find_get_estimator", lambda module, entry: lambda **kwargs: Recording())
    base = {"entry_point": str(script), "hyperparameters_json": None, "func": cli_train.train}
    assert cli_train.train({**base, "mode": "train", "warmup": "false", "eager": "true", "summary": "exp"}, []) == 0
    assert cli_train.train({**base, "mode": "train", "warmup": True, "eager": False, "summary": None}, None) == 0
    assert cli_train.test({**base, "mode": "test", "eager": "false", "summary": "exp", "func": cli_train.test}, []) == 0
    assert calls == [("fit", "exp", False, True), ("fit", None, True, False), ("test", "exp", False)]
    capsys.readouterr()


def test_fe_logs_takes_fastestimators_dict_without_saving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    from fe.cli.logs import logs  # pylint: disable=import-outside-toplevel
    (tmp_path / "run.txt").write_text("FastEstimator-Train: step: 1; ce: 2.0;\nFastEstimator-Train: step: 2; ce: 1.0;\n")
    monkeypatch.chdir(tmp_path)
    options = {"mode": "logs", "log_dir": str(tmp_path), "extension": ".txt", "recursive": False, "ignore": None,
               "include": None, "smooth": 1, "pretty_names": False, "group": None, "save": False, "save_dir": None,
               "share_legend": True}
    assert logs(options, []) == 0
    assert (tmp_path / "history.png").is_file() and not (tmp_path / "parse_logs.png").exists()
    saved = tmp_path / "out"
    assert logs({**options, "save": True, "save_dir": str(saved) + os.sep}, []) == 0
    assert (saved / "parse_logs.png").is_file()
    capsys.readouterr()


def test_fastestimators_run_main_built_from_fes_parsers_runs_each_command(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          capsys: pytest.CaptureFixture) -> None:
    """FastEstimator's run_main: its own parser (subcommand under 'mode'), fe's configure_*_parser functions, and
    `args.func(vars(args), unknown)`."""
    import argparse  # pylint: disable=import-outside-toplevel
    from fe.cli.logs import configure_log_parser  # pylint: disable=import-outside-toplevel
    from fe.cli.run import configure_run_parser  # pylint: disable=import-outside-toplevel
    script = tmp_path / "runner.py"
    script.write_text("SEEN = {}\n\ndef fastestimator_run(epochs=1, quick=False):\n"
                      "    SEEN.update(epochs=epochs, quick=quick)\n")
    parser = argparse.ArgumentParser(allow_abbrev=False)
    subparsers = parser.add_subparsers()
    subparsers.required = True
    subparsers.dest = "mode"
    configure_run_parser(subparsers)
    configure_log_parser(subparsers)
    args, unknown = parser.parse_known_args(["run", str(script), "--epochs", "3", "--quick", "true"])
    options = vars(args)
    assert options["mode"] == "run"
    assert args.func(options, unknown) in (0, None)
    # the script's module, whatever name it got (a module already called 'runner' is never shadowed)
    (loaded, ) = [module for module in list(sys.modules.values()) if getattr(module, "__file__", None) == str(script)]
    assert loaded.SEEN == {"epochs": 3, "quick": True}
    (tmp_path / "run.txt").write_text("FastEstimator-Train: step: 1; ce: 2.0;\nFastEstimator-Train: step: 2; ce: 1.0;\n")
    monkeypatch.chdir(tmp_path)
    args, unknown = parser.parse_known_args(["logs", str(tmp_path)])
    assert args.func(vars(args), unknown) in (0, None)
    assert (tmp_path / "history.png").is_file()
    capsys.readouterr()
