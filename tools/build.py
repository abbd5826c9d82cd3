#!/usr/bin/env python3
"""Build the wheel and sdist of each distribution into dist/ with one command. Standard library only.

Usage:
    python tools/build.py [package ...]     # package: fe-core, fe-torch, fe-tf, fe (default: all four)

Uses `python -m build --no-isolation` from the current interpreter when `build` and `hatchling` are importable
(as in `hatch run build:all`), otherwise from `.venvs/build`, created on first use by tools/test.py's helpers.
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

PACKAGES = ["fe-core", "fe-torch", "fe-tf", "fe"]
DIST = runner.ROOT / "dist"


def build_python() -> str:
    """An interpreter that has `build` and `hatchling`."""
    if all(importlib.util.find_spec(name) for name in ("build", "hatchling")):
        return sys.executable
    return str(runner.ensure_venv("build", [], ["build", "hatchling"]))


def main(argv: list[str]) -> int:
    names = argv or PACKAGES
    unknown = sorted(set(names) - set(PACKAGES))
    if unknown:
        print(f"unknown package(s) {unknown}; choose from {PACKAGES}", file=sys.stderr)
        return 2
    python = build_python()
    DIST.mkdir(exist_ok=True)
    for name in names:
        stem = name.replace("-", "_")
        for old in DIST.glob(f"{stem}-*"):
            old.unlink()
        subprocess.run([python, "-m", "build", "--no-isolation", "--outdir", str(DIST),
                        str(runner.ROOT / "packages" / name)], check=True, cwd=runner.ROOT)
        built = sorted(p.name for p in DIST.glob(f"{stem}-*"))
        if len([b for b in built if b.endswith(".whl")]) != 1 or len([b for b in built if b.endswith(".tar.gz")]) != 1:
            print(f"{name}: expected one wheel and one sdist, got {built}", file=sys.stderr)
            return 1
        print(f"{name}: {', '.join(built)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
