"""Which Python runs a benchmark or one of its subprocesses: the venvs `python tools/test.py` makes under .venvs/.

Standard library only: the memory and allocator benchmarks' drivers run on a bare interpreter.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "venv_python", "default_python", "has_module"]

ROOT = Path(__file__).resolve().parents[2]


def venv_python(*venvs: str) -> str:
    """The interpreter of the first of `venvs` (names under .venvs/) that exists; '' when none does."""
    for venv in venvs:
        candidate = ROOT / ".venvs" / venv / "bin" / "python"
        if candidate.exists():
            return str(candidate)
    return ""


def default_python(framework: str) -> str:
    """The interpreter for a `framework` ('torch' or 'tf') subprocess: .venvs/fe, else .venvs/<framework>, else this
    one."""
    return venv_python("fe", framework) or sys.executable


def has_module(python: str, module: str) -> bool:
    """Whether `python` can import `module` (without importing it)."""
    probe = [python, "-c", f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"]
    return subprocess.run(probe, check=False).returncode == 0
