"""Issue 30 item 13: the documentation site publishes no build scripts (docs/gen_api.py, docs/griffe_examples.py)
and has every API reference page in its navigation (92 were reachable only from the index page)."""
from __future__ import annotations

import fnmatch
import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _config():
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def _load(name):
    spec = importlib.util.spec_from_file_location(f"fe_docs_{name}", ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_python_files_under_docs_are_not_published():
    patterns = [line.strip() for line in (_config().get("exclude_docs") or "").splitlines() if line.strip()]
    scripts = [path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.py")]
    assert {"gen_api.py", "griffe_examples.py"} <= set(scripts)
    for script in scripts:
        assert any(fnmatch.fnmatch(script, pattern) or fnmatch.fnmatch(Path(script).name, pattern)
                   for pattern in patterns), f"docs/{script} would be published"


def test_every_api_page_is_in_the_navigation():
    config = _config()
    assert "docs/api_nav.py" in config.get("hooks", [])
    nav = _load("api_nav").expand_nav(config["nav"])
    (section,) = [item["API reference"] for item in nav if isinstance(item, dict) and "API reference" in item]
    in_nav = {next(iter(entry.values())) for entry in section if isinstance(entry, dict)}
    api_pages = _load("api_pages")
    written = {api_pages.page_path(owner) for owner in api_pages.pages()}  # what docs/gen_api.py writes
    assert len(written) > 50 and in_nav == written
    assert section[0] == "api/index.md"
