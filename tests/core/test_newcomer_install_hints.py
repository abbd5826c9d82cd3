"""Issue 30 item 1: every install hint names a package that is fe's own.

The name `fe` on the public package index belongs to an unrelated project, so a hint such as
`pip install 'fe[torch]'` replaces fe with that project. Hints give the command that works from a clone
(`pip install ./packages/fe-torch`) and fe's own distribution names (`fe-torch`, `fe-tf`, `fe-core[...]`).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from fe_core.framework import BackendNotInstalledError
from fe_core.framework.registry import get_backend
from fe_core.install_hint import install_command
from fe_core.optional import MissingExtraError, import_optional

ROOT = Path(__file__).resolve().parents[2]

# `pip install fe`, `pip install 'fe[torch]'`, "install `fe[tf]`", "install fe[torch]": an index install of `fe`
INDEX_HINT = re.compile(r"""pip3?\s+install\s+(-\S+\s+)*["'`]?fe(\[|["'`]?(\s|$|\)))|install\s+["'`]?fe\[""")


def _sources():
    for top in ("packages", "docs", "tools"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".md") and path.is_file() and "site-packages" not in path.parts:
                yield path
    yield ROOT / "README.md"


def test_no_message_or_document_tells_users_to_install_fe_from_an_index():
    offenders = []
    for path in _sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if INDEX_HINT.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize("line", ["pip install 'fe[torch]'", 'pip install "fe[tf]"', "install `fe[torch]` or",
                                  "pip install fe", "pip install -U fe"])
def test_the_grep_recognises_index_hints(line):
    assert INDEX_HINT.search(line)


@pytest.mark.parametrize("line", ['pip install "./packages/fe[torch,examples]"', "pip install ./packages/fe-torch",
                                  "pip install fe-torch once released", 'pip install "fe-core[image]"'])
def test_the_grep_accepts_fe_s_own_commands(line):
    assert not INDEX_HINT.search(line)


@pytest.mark.parametrize("name, distribution", [("torch", "fe-torch"), ("tf", "fe-tf")])
def test_a_missing_backend_names_its_own_distribution(monkeypatch, name, distribution):
    monkeypatch.setitem(sys.modules, distribution.replace("-", "_"), None)
    with pytest.raises(BackendNotInstalledError) as info:
        get_backend(name)
    message = str(info.value)
    assert f"pip install ./packages/{distribution} from a clone of fe" in message
    assert f"pip install {distribution} once released" in message
    assert not INDEX_HINT.search(message)


def test_a_missing_optional_library_names_the_fe_core_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(MissingExtraError) as info:
        import_optional("cv2", extra="image", feature="ReadImage")
    assert str(info.value) == ('ReadImage needs OpenCV (cv2), which is not installed: pip install '
                               '"./packages/fe-core[image]" from a clone of fe (pip install "fe-core[image]" once '
                               'released)')


def test_the_fe_distribution_is_only_named_by_its_path():
    assert install_command("fe", "examples") == 'pip install "./packages/fe[examples]" from a clone of fe'
