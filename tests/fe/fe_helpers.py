"""Helpers for the fe suite: running Python (and the `fe` command) in a fresh process."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[2]


def child_env() -> dict:
    """The environment for child processes: one thread per op, quiet TensorFlow, no bytecode files."""
    return dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="1",
                PYTHONUNBUFFERED="1")


def run_python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `code` with this interpreter in a new process; return the completed process (text output)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(),
                          timeout=timeout, cwd=ROOT)


def run_fe(args: List[str], cwd: Optional[Path] = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the `fe` command (the console script installed next to this interpreter) with `args`."""
    script = Path(sys.executable).parent / ("fe.exe" if os.name == "nt" else "fe")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "fe.cli"]
    return subprocess.run(command + args, capture_output=True, text=True, env=child_env(), timeout=timeout,
                          cwd=cwd or ROOT)


# ---------------------------------------------------------------------------------------------------- benchmarks
# The smoke tests of tools/bench (tests/fe/test_benchmarks_*.py): split into files of similar cost, since pytest-xdist
# (--dist loadfile) runs whole files per process and the longest file bounds the suite's wall time.
BENCH = ROOT / "tools" / "bench"
RATIO = r"\d+\.\d{3}x"


def bench(script: str, *args: str, machine_line: bool = True) -> str:
    """Run a benchmark with this interpreter (both frameworks installed); return its output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    result = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    if machine_line:
        assert result.stdout.startswith("machine: "), result.stdout[:500]
    return result.stdout


def rows(output: str, first_column: str) -> List[List[str]]:
    """The cells of the table rows of `output` whose first column starts with `first_column`."""
    return [[cell.strip() for cell in line.split("|")] for line in output.splitlines()
            if line.startswith(first_column) and "|" in line]
