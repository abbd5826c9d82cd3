"""The README's Quickstart works as written: its `fe` commands and its Python script run (with fewer epochs)."""
from __future__ import annotations

import importlib.util
import re
import shlex
import sys

from fe_helpers import ROOT, run_fe, run_python

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def quickstart_blocks(language: str):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def load_main_job():
    """tools/main.py (the CI's `main` stage) as a module."""
    spec = importlib.util.spec_from_file_location("fe_main_job", ROOT / "tools" / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_quickstart_install_command_is_what_the_ci_main_job_installs_with(tmp_path, monkeypatch):
    """The README's `pip install ./packages/...` line works from a clone: tools/main.py (the `main` stage of .ci/run,
    on every CI run) installs its venv with exactly that command, in the repository root, then trains, tests and plots
    with the installed `fe` command. Here: main.py runs that very command (not editable), and, in a venv that already
    existed, reinstalls the three local packages so the installed code is the clone's."""
    (install, ) = [line.split("#")[0].strip() for block in quickstart_blocks("bash") for line in block.splitlines()
                   if line.startswith("pip install ")]
    assert "./packages/fe-core" in install and "fe[torch" in install and " -e " not in f" {install} "
    assert "tools/main.py" in (ROOT / ".ci" / "run").read_text()
    main = load_main_job()
    assert main.quickstart_install_command() == install
    calls = []
    monkeypatch.setattr(main.subprocess, "run", lambda command, **kwargs: calls.append((command, kwargs)))
    monkeypatch.setattr(main, "VENV", tmp_path / "main")
    monkeypatch.setattr(main.runner, "_venv_usable", lambda env_dir, python: False)
    python = main.install_quickstart()
    assert python == main.runner.venv_python(tmp_path / "main")
    assert [command for command, _ in calls] == [[sys.executable, "-m", "venv", "--clear", str(tmp_path / "main")],
                                                 [str(python), "-m", *shlex.split(install)]]
    assert calls[1][1]["cwd"] == ROOT and calls[1][1]["check"]
    calls.clear()
    monkeypatch.setattr(main.runner, "_venv_usable", lambda env_dir, python: True)
    main.install_quickstart()
    assert [command for command, _ in calls] == [
        [str(python), "-m", *shlex.split(install)],
        [str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", "./packages/fe-core",
         "./packages/fe-torch", "./packages/fe"]]


def test_the_quickstart_commands_train_and_plot(tmp_path):
    commands = [line.split("#")[0].strip() for block in quickstart_blocks("bash") for line in block.splitlines()
                if line.startswith("fe ")]
    assert [c.split()[1] for c in commands] == ["train", "logs"]
    train, _, log_name = commands[0].partition(">")
    args = shlex.split(train)[1:]
    args[args.index("--epochs") + 1] = "1"
    result = run_fe(args + ["--save_dir", str(tmp_path / "models")], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / log_name.strip()).write_text(result.stdout)
    assert "FastEstimator-Test:" in result.stdout
    plotted = run_fe(shlex.split(commands[1])[1:], cwd=tmp_path)
    assert plotted.returncode == 0, plotted.stderr
    assert (tmp_path / "history.png").read_bytes()[:8] == PNG_MAGIC


def test_the_quickstart_script_runs():
    (script, ) = quickstart_blocks("python")
    assert "epochs=3" in script
    result = run_python(script.replace("epochs=3", "epochs=1"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"FastEstimator-Eval: step: \d+; epoch: 1; accuracy: ", result.stdout)
    # accuracies are stored as numpy scalars (as FastEstimator does), never 0-d arrays
    assert re.search(r"^\{\d+: (np\.float\d+\()?0\.\d+", result.stdout, re.M), result.stdout[-500:]
    assert "array(" not in result.stdout
