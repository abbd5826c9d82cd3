"""The README's Quickstart works as written: its `fe` commands and its Python script run (with fewer epochs)."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from fe_helpers import ROOT, run_fe, run_python

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def quickstart_blocks(language: str):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


@pytest.mark.slow
def test_the_quickstart_install_command_works_from_a_clone(tmp_path):
    """The README's `pip install ./packages/...` line installs a working fe into a fresh virtual environment."""
    (install, ) = [line.split("#")[0].strip() for block in quickstart_blocks("bash") for line in block.splitlines()
                   if line.startswith("pip install ")]
    assert "./packages/fe-core" in install and "fe[torch" in install
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    python = tmp_path / "venv" / "bin" / "python"
    args = shlex.split(install)[2:]
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c",
                             str(ROOT / "tools" / "constraints.txt"), *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    check = subprocess.run([str(python), "-c", "import sys, fe; from fe.architecture.pytorch import LeNet; "
                            "assert 'tensorflow' not in sys.modules; print(fe.__version__)"],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    assert (tmp_path / "venv" / "bin" / "fe").exists()


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
