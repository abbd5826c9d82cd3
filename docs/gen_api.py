"""Write the API reference pages at build time (mkdocs-gen-files): one page per `fe` package, one entry per public
name at its FastEstimator path, rendered by mkdocstrings from the docstrings where the name is defined.

The names and paths come from the `fe_export` declarations, read by `tools/gen_namespace.py` (the same source as the
generated `fe` namespace), so the reference can never list a name the namespace lacks, or miss one it has.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import mkdocs_gen_files

_spec = importlib.util.spec_from_file_location("fe_docs_api_pages", Path(__file__).with_name("api_pages.py"))
assert _spec is not None and _spec.loader is not None
api_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_pages)


def main() -> None:
    pages = api_pages.pages()
    index = ["# API reference", "",
             "Every public name of fe at its FastEstimator dotted path, grouped by the `fe` package users import it "
             "from. Each entry is rendered from the docstring where the name is defined (fe_core, fe_torch or fe_tf).",
             ""]
    for owner in sorted(pages):
        path = api_pages.page_path(owner)
        rows = sorted(pages[owner])
        index.append(f"- [`{owner}`]({path[len('api/'):]}): {len(rows)} name{'s' if len(rows) != 1 else ''}")
        lines = [f"# `{owner}`", ""]
        for shortest, paths, target in rows:
            name = shortest.rpartition(".")[2]
            others = [path for path in paths if path != shortest]
            lines += [f"## `{name}`", "", f"`{shortest}`" + (
                " (also " + ", ".join(f"`{path}`" for path in others) + ")" if others else ""), "",
                      f"::: {target}", "    options:", "      show_root_heading: false", ""]
        with mkdocs_gen_files.open(path, "w") as page:
            page.write("\n".join(lines))
    with mkdocs_gen_files.open("api/index.md", "w") as page:
        page.write("\n".join(index) + "\n")


main()
