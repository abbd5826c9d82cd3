#!/usr/bin/env python3
"""Build the documentation site (mkdocs + mkdocs-material + mkdocstrings) with `mkdocs build --strict`, offline.

    python tools/docs.py [--serve]

It creates (or reuses) the fe test suite's `.venvs/fe` (fe installed editable with both frameworks, constrained by
tools/constraints.txt, the test tools and the documentation tools pinned in tools/test.py's DOCS_REQUIREMENTS: one
environment for both, since the tutorials need exactly what the fe suite tests), and builds `site/` from `mkdocs.yml`:
the guides in `docs/`, the tutorials in `docs/tutorials/` and an API reference generated from the docstrings of every
public name at its `fe` path (`docs/gen_api.py`, from the same `fe_export` declarations as the namespace; griffe reads
the sources statically). The tutorials' code blocks are executed while building (markdown-exec) and their output is
what the pages show; an error in any block, like any other warning, fails the build. Nothing is fetched while
building. The build's HOME and TMPDIR point to a temporary directory that is removed afterwards, so files the
tutorials write (checkpoints, logs, Keras/matplotlib caches) leave nothing behind. Standard library only; any
Python >= 3.10.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

_spec = importlib.util.spec_from_file_location("fe_test_runner", Path(__file__).resolve().parent / "test.py")
assert _spec is not None and _spec.loader is not None
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

# What the tutorials run: fe with both frameworks and the examples' extras (scikit-learn's digits, matplotlib): the
# fe suite's environment, which also holds the documentation tools.
DOCS_SUITE = "fe"
# The tutorials' runtime: one intra-op thread (small models on shared CI cores), quiet TensorFlow.
BUILD_ENV = {"OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "TF_ENABLE_ONEDNN_OPTS": "0",
             "MPLBACKEND": "Agg", "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1:8000 instead of building")
    args = parser.parse_args(argv)
    python = runner.ensure_venv(DOCS_SUITE, runner.SUITE_PACKAGES[DOCS_SUITE], runner.suite_requirements(DOCS_SUITE),
                                quiet=True)
    command = [str(python), "-m", "mkdocs", "serve" if args.serve else "build", "--strict"]
    if args.serve:
        command += ["-a", "127.0.0.1:8000"]
    scratch = Path(tempfile.mkdtemp(prefix="fe-docs-"))
    try:
        env = dict(os.environ, **BUILD_ENV, HOME=str(scratch), TMPDIR=str(scratch))
        print(f"[docs] {' '.join(command[1:])}", flush=True)
        return subprocess.run(command, cwd=runner.ROOT, env=env, check=False).returncode
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
