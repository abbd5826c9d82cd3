"""fe-core never imports a deep-learning framework (DESIGN.md): not at import time, not lazily inside a function."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import fe_core

FRAMEWORKS = ("torch", "tensorflow", "keras", "jax")
PACKAGE_DIR = Path(fe_core.__file__).resolve().parent
SRC_DIR = PACKAGE_DIR.parent

IMPORT_EVERYTHING = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    import fe_core

    failed = {}
    names = []
    def onerror(name):
        failed[name] = repr(sys.exc_info()[1])
    for info in pkgutil.walk_packages(fe_core.__path__, "fe_core.", onerror=onerror):
        names.append(info.name)
        try:
            importlib.import_module(info.name)
        except BaseException as error:  # report every module that cannot be imported
            failed[info.name] = repr(error)
    frameworks = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))
    print(json.dumps({"modules": names, "failed": failed, "frameworks": frameworks}))
""")


def test_importing_every_fe_core_module_loads_no_framework():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])
    completed = subprocess.run([sys.executable, "-c", IMPORT_EVERYTHING, *FRAMEWORKS], capture_output=True, text=True,
                               env=env, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["failed"] == {}, f"fe_core modules that fail to import: {report['failed']}"
    assert {"fe_core.modes", "fe_core.schedule.scheduler", "fe_core.framework.registry"} <= set(report["modules"])
    assert report["frameworks"] == [], f"importing fe_core loaded {report['frameworks']}"


def framework_imports(source: str, filename: str = "<source>") -> List[str]:
    """Every place `source` imports a framework: import statements anywhere (functions included), and
    `importlib.import_module(...)` / `__import__(...)` calls with a literal module name. Docstrings and comments that
    merely mention a framework are not imports."""
    found = []

    def is_framework(module: str) -> bool:
        return module.split(".")[0] in FRAMEWORKS

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"{filename}:{node.lineno}: import {alias.name}")
                      for alias in node.names if is_framework(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and is_framework(node.module):
                found.append((node.lineno, f"{filename}:{node.lineno}: from {node.module} import ..."))
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            called = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
            first = node.args[0]
            if (called in ("import_module", "__import__") and isinstance(first, ast.Constant)
                    and isinstance(first.value, str) and is_framework(first.value)):
                found.append((node.lineno, f"{filename}:{node.lineno}: {called}({first.value!r})"))
    return [message for _, message in sorted(found)]


def test_no_fe_core_source_file_imports_a_framework():
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    assert len(files) > 10
    offenders = []
    for path in files:
        offenders += framework_imports(path.read_text(encoding="utf-8"), str(path.relative_to(SRC_DIR)))
    assert offenders == []


def test_the_static_check_catches_every_import_form():
    source = textwrap.dedent('''
        """Docs may say: import torch, or from tensorflow import keras."""
        import os, torch.nn as nn
        from tensorflow.keras import layers
        import jax
        # import keras  (a comment is not an import)

        def lazy():
            import keras
            from torch import nn
            importlib.import_module("tensorflow")
            import_module("torch.cuda")
            __import__("jax.numpy")
            builtins.__import__("tensorflow")
            importlib.import_module(name)  # not a literal: the registry imports backend packages this way
            return sys.modules.get("torch")  # looking is not importing
    ''')
    found = framework_imports(source)
    assert [line.split(": ", 1)[1] for line in found] == [
        "import torch.nn", "from tensorflow.keras import ...", "import jax", "import keras", "from torch import ...",
        "import_module('tensorflow')", "import_module('torch.cuda')", "__import__('jax.numpy')",
        "__import__('tensorflow')"]


def test_the_static_check_ignores_similar_names():
    source = "import torchvision_like_name\nfrom jaxtyping_like import x\nimport fe_torch\nimportlib.import_module('fe_tf')\n"
    assert framework_imports(source) == []
