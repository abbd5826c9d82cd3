#!/usr/bin/env python3
"""Main job of the repository. For now a smoke check: in `.venvs/fe` (all four packages, both frameworks; the same
environment `python tools/test.py fe` uses), import fe_core and print its version and its subpackages.
It will become a real training run. Standard library only; any Python >= 3.10.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("fe_test_runner", Path(__file__).resolve().parent / "test.py")
assert _spec is not None and _spec.loader is not None
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

SMOKE = """
import pkgutil
import fe_core
from fe_core.__about__ import __version__
print("fe_core", __version__)
print("subpackages:", ", ".join(m.name for m in pkgutil.iter_modules(fe_core.__path__) if m.ispkg))
"""


def main() -> int:
    python = runner.ensure_venv("fe", runner.SUITE_PACKAGES["fe"], runner.TEST_REQUIREMENTS)
    return subprocess.run([str(python), "-c", SMOKE], cwd=runner.ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
