"""Every public name of FastEstimator 1.x's API (../shared/reference/fe-api or the copy the tests are given) is
reachable at its dotted path in `fe`: the classes and functions of each module page and the names each package
re-exports. The few names fe deliberately does not provide are listed with the reason."""
from __future__ import annotations

import ast
import functools
import os
import re
from pathlib import Path
from typing import Dict, List

import pytest

import fe

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(os.environ.get("FE_REFERENCE_API", ROOT.parent / "shared" / "reference" / "fe-api"))

# Names fe does not provide, and why (kept short on purpose: each one is a decision).
NOT_PROVIDED: Dict[str, str] = {}


def _reference_paths() -> List[str]:
    paths: List[str] = []
    for page in sorted(REFERENCE.glob("*.md")):
        module = None
        for line in page.read_text().splitlines():
            header = re.match(r"^## `(fe[\w.]*)`", line)
            if header:
                module = header.group(1)
                continue
            definition = re.match(r"^### (?:class|def) (\w+)", line)
            if definition and module and not definition.group(1).startswith("_"):
                paths.append(f"{module}.{definition.group(1)}")
            exports = re.search(r"lazy\.attach\(.*submod_attrs=(\{.*\})", line)
            if exports and module:
                for names in ast.literal_eval(exports.group(1)).values():
                    paths += [f"{module}.{name}" for name in names]
    return sorted(set(paths))


PATHS = _reference_paths() if REFERENCE.is_dir() else []


def test_the_reference_pages_were_read():
    if not REFERENCE.is_dir():
        pytest.skip(f"the reference pages are not next to this checkout ({REFERENCE})")
    assert len(PATHS) > 700


@pytest.mark.parametrize("path", PATHS)
def test_the_name_is_reachable_at_its_fastestimator_path(path):
    if path in NOT_PROVIDED:
        pytest.skip(NOT_PROVIDED[path])
    owner, _, name = path.rpartition(".")
    value = functools.reduce(getattr, path.split(".")[1:], fe)
    assert value is not None
    namespace: dict = {}
    exec(f"from {owner} import {name}", namespace)  # pylint: disable=exec-used
    assert namespace[name] is value
