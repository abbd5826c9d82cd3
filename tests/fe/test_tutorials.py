"""The tutorials (docs/tutorials): every page is in the site's nav and executes code, and one quick one runs here.

The real check is the strict docs build (`python tools/docs.py`, run by CI), which executes every block of every
tutorial through markdown-exec; the last test runs the blocks of one cheap tutorial the same way (one namespace per
`session`, in order), so that the way the docs build runs them stays covered by the fe suite. Running more tutorials
here would repeat the docs build's work (CI time).
"""
from __future__ import annotations

import linecache
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
_FENCE = re.compile(r'^(?P<indent>[ \t]*)```python (?P<options>[^\n]*\bexec="on"[^\n]*)\n(?P<body>.*?)^(?P=indent)```',
                    re.MULTILINE | re.DOTALL)


def executed_blocks(text: str) -> Iterator[Tuple[Optional[str], str]]:
    """(session, code) of each block markdown-exec runs, in page order, tab indentation removed."""
    for match in _FENCE.finditer(text):
        indent = len(match.group("indent"))
        code = "\n".join(line[indent:] for line in match.group("body").splitlines())
        session = re.search(r'\bsession="([^"]+)"', match.group("options"))
        yield (session.group(1) if session else None), code


def run_tutorial(path: Path) -> None:
    """Execute a tutorial's blocks as the docs build does: each session shares one namespace."""
    sessions: Dict[Optional[str], dict] = {}
    for number, (session, code) in enumerate(executed_blocks(path.read_text())):
        namespace = sessions.setdefault(session, {"__name__": f"tutorial_{session}"}) if session else {"__name__": "b"}
        filename = f"<{path.name} block {number}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
        exec(compile(code, filename, "exec"), namespace)  # pylint: disable=exec-used


def _nav_pages(node: object) -> List[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    return []


def test_every_tutorial_is_in_the_nav_and_executes_code():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = set(_nav_pages(config["nav"]))
    pages = sorted(TUTORIALS.rglob("*.md"))
    assert len(pages) >= 10
    for page in pages:
        relative = page.relative_to(ROOT / "docs").as_posix()
        assert relative in nav, f"{relative} is not in mkdocs.yml's nav"
        if page.name != "index.md":
            assert list(executed_blocks(page.read_text())), f"{relative} executes no code block"
    assert "markdown-exec" in config["plugins"]


def test_block_extraction_handles_tabs_and_sessions():
    text = ('```python exec="on" session="a"\nx = 1\n```\n\n=== "PyTorch"\n\n'
            '    ```python exec="on" source="above" session="a"\n    y = x + 1\n    ```\n'
            '```python\nnot_executed()\n```\n')
    assert list(executed_blocks(text)) == [("a", "x = 1"), ("a", "y = x + 1")]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["beginner/pipeline.md"])
def test_tutorial_runs(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FE_HISTORY_DB", "off")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    run_tutorial(TUTORIALS / page)
    assert "Traceback" not in capsys.readouterr().err
