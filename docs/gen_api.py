"""Write the API reference pages at build time (mkdocs-gen-files): one page per `fe` package, one entry per public
name at its FastEstimator path, rendered by mkdocstrings from the docstrings where the name is defined.

The names and paths come from the `fe_export` declarations, read by `tools/gen_namespace.py` (the same source as the
generated `fe` namespace), so the reference can never list a name the namespace lacks, or miss one it has.
"""
from __future__ import annotations

import importlib.util
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gen_namespace", ROOT / "tools" / "gen_namespace.py")
assert _spec is not None and _spec.loader is not None
gen_namespace = importlib.util.module_from_spec(_spec)
sys.modules["gen_namespace"] = gen_namespace
_spec.loader.exec_module(gen_namespace)


def _pages() -> Dict[str, List[tuple]]:
    """fe package -> [(shortest fe path, every fe path, defining module:name)], one row per public object."""
    declarations, _ = gen_namespace.scan()
    by_object: Dict[tuple, List[str]] = defaultdict(list)
    for declaration in declarations:
        by_object[(declaration.module, declaration.name)].append(declaration.path)
    pages: Dict[str, List[tuple]] = defaultdict(list)
    for (module, name), paths in by_object.items():
        shortest = min(paths, key=lambda path: (path.count("."), path))
        owner = shortest.rpartition(".")[0]
        pages[owner].append((shortest, sorted(paths), f"{module}.{name}"))
    return pages


def main() -> None:
    pages = _pages()
    index = ["# API reference", "",
             "Every public name of fe at its FastEstimator dotted path, grouped by the `fe` package users import it "
             "from. Each entry is rendered from the docstring where the name is defined (fe_core, fe_torch or fe_tf).",
             ""]
    for owner in sorted(pages):
        slug = owner.replace(".", "/")
        rows = sorted(pages[owner])
        index.append(f"- [`{owner}`]({slug}.md): {len(rows)} name{'s' if len(rows) != 1 else ''}")
        lines = [f"# `{owner}`", ""]
        for shortest, paths, target in rows:
            name = shortest.rpartition(".")[2]
            others = [path for path in paths if path != shortest]
            lines += [f"## `{name}`", "", f"`{shortest}`" + (
                " (also " + ", ".join(f"`{path}`" for path in others) + ")" if others else ""), "",
                      f"::: {target}", "    options:", "      show_root_heading: false", ""]
        with mkdocs_gen_files.open(f"api/{slug}.md", "w") as page:
            page.write("\n".join(lines))
    with mkdocs_gen_files.open("api/index.md", "w") as page:
        page.write("\n".join(index) + "\n")


main()
