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
