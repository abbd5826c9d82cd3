#!/usr/bin/env python3
"""Build the documentation site (mkdocs + mkdocs-material + mkdocstrings) with `mkdocs build --strict`, offline.

    python tools/docs.py [--serve]

It creates (or reuses) `.venvs/docs` with the documentation tools, pinned below, and builds `site/` from `mkdocs.yml`:
the guides in `docs/` and an API reference generated from the docstrings of every public name at its `fe` path
(`docs/gen_api.py`, from the same `fe_export` declarations as the namespace). Any warning fails the build. Nothing is
fetched while building: the sources are read statically (griffe), so neither framework is needed. Standard library
only; any Python >= 3.10.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

_spec = importlib.util.spec_from_file_location("fe_test_runner", Path(__file__).resolve().parent / "test.py")
assert _spec is not None and _spec.loader is not None
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

DOCS_REQUIREMENTS = ["mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings[python]==1.0.8",
                     "mkdocstrings-python==2.0.11", "mkdocs-gen-files==0.6.1"]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1:8000 instead of building")
    args = parser.parse_args(argv)
    python = runner.ensure_venv("docs", [], DOCS_REQUIREMENTS, quiet=True)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    command = [str(python), "-m", "mkdocs", "serve" if args.serve else "build", "--strict"]
    if args.serve:
        command += ["-a", "127.0.0.1:8000"]
    print(f"[docs] {' '.join(command[1:])}", flush=True)
    return subprocess.run(command, cwd=runner.ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
