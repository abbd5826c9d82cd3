"""Which API reference pages the documentation site has: one per `fe` package, listing the public names declared
there with `fe_export` (read by `tools/gen_namespace.py`, the same source as the generated `fe` namespace).

Shared by `docs/gen_api.py` (writes the pages while the site builds) and `docs/api_nav.py` (puts every page in the
navigation). Not published: mkdocs.yml excludes the `*.py` files under docs/.
"""
from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent


def _gen_namespace():
    if "gen_namespace" in sys.modules:
        return sys.modules["gen_namespace"]
    spec = importlib.util.spec_from_file_location("gen_namespace", ROOT / "tools" / "gen_namespace.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_namespace"] = module
    spec.loader.exec_module(module)
    return module


def pages() -> Dict[str, List[tuple]]:
    """fe package -> [(shortest fe path, every fe path, defining module:name)], one row per public object."""
    declarations, _ = _gen_namespace().scan()
    by_object: Dict[tuple, List[str]] = defaultdict(list)
    for declaration in declarations:
        by_object[(declaration.module, declaration.name)].append(declaration.path)
    result: Dict[str, List[tuple]] = defaultdict(list)
    for (module, name), paths in by_object.items():
        shortest = min(paths, key=lambda path: (path.count("."), path))
        owner = shortest.rpartition(".")[0]
        result[owner].append((shortest, sorted(paths), f"{module}.{name}"))
    return result


def page_path(owner: str) -> str:
    """The page of the `fe` package `owner`, relative to docs/ ('fe.op.numpyop' -> 'api/fe/op/numpyop.md')."""
    return f"api/{owner.replace('.', '/')}.md"
