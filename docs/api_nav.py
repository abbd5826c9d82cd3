"""A mkdocs hook (mkdocs.yml `hooks:`): the "API reference" entry of the navigation lists every API page that
`docs/gen_api.py` writes (one per `fe` package), under its index, so no page of the reference is left out of the
navigation. Not published: mkdocs.yml excludes the `*.py` files under docs/."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Dict, List

_spec = importlib.util.spec_from_file_location("fe_docs_api_pages", Path(__file__).with_name("api_pages.py"))
assert _spec is not None and _spec.loader is not None
api_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_pages)

INDEX = "api/index.md"


def api_section() -> List[Any]:
    """The API reference's navigation: its index, then one entry per `fe` package page."""
    return [INDEX] + [{owner: api_pages.page_path(owner)} for owner in sorted(api_pages.pages())]


def expand_nav(nav: List[Any]) -> List[Any]:
    """`nav` with the entry whose page is api/index.md replaced by the whole API section (same title)."""
    expanded: List[Any] = []
    for item in nav:
        if isinstance(item, dict) and len(item) == 1 and next(iter(item.values())) == INDEX:
            expanded.append({next(iter(item)): api_section()})
        else:
            expanded.append(item)
    return expanded


def on_config(config: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:  # pylint: disable=unused-argument
    """mkdocs event: expand the API reference entry of the configured navigation."""
    if config.get("nav"):
        config["nav"] = expand_nav(config["nav"])
    return config
