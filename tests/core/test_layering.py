"""fe-core's modules import one way: no import cycle between its files (docs/architecture.md, "The layers").

Every import counts, including those inside functions and under TYPE_CHECKING: a lower layer that needs to react to a
higher one offers a callback instead (as `determinism.on_seed` does for the backend registry).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import fe_core

SOURCE = Path(fe_core.__file__).resolve().parent


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> Dict[str, Set[str]]:
    modules = {_module_of(path): path for path in SOURCE.rglob("*.py")}
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("fe_core"):
                    graph[name].add(target)
                    break
    return graph


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_fe_core_has_no_import_cycle():
    # A package __init__ that only re-exports its own submodules is a face, not a layer: leave it out of the loop.
    graph = _graph()
    faces = {name for name in graph if (SOURCE.parent / Path(*name.split(".")) / "__init__.py").exists()}
    pruned = {name: {t for t in targets if t not in faces or not t.startswith(name)} for name, targets in graph.items()}
    assert _cycles(pruned) == []


def test_the_cycle_detector_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_pipeline_module_imports_another_ones_private_names():
    # fe_core.pipeline's layers talk through public names (issue 42): `from fe_core.pipeline.x import _y` is refused
    found = []
    for path in sorted((SOURCE / "pipeline").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fe_core.pipeline"):
                found += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_")]
    assert found == []
