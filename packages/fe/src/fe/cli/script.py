"""Loading the script (or module) that a `fe train` / `fe test` command names, and its `get_estimator`."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Callable

from fe.cli.errors import CLIError
from fe.cli.quiet import quiet_tensorflow_start

__all__ = ["load_entry_point", "find_get_estimator"]


def _looks_like_module_name(entry_point: str) -> bool:
    return not entry_point.endswith(".py") and all(part.isidentifier() for part in entry_point.split("."))


def load_entry_point(entry_point: str) -> ModuleType:
    """Import a script by path (`path/to/train.py`) or a module by name (`fe.examples.digits_torch_cnn`).

    A script is imported as a module named after its file, with its directory first on `sys.path` (as FastEstimator
    does, so it can import its neighbours).

    TensorFlow's start-up lines (absl, CUDA probing) are left out when the script uses TensorFlow (see
    `fe.cli.quiet`).

    Raises:
        CLIError: If there is no such file or module.
    """
    quiet_tensorflow_start(entry_point)
    if os.path.isfile(entry_point):
        path = os.path.abspath(entry_point)
        name = os.path.splitext(os.path.basename(path))[0]
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) != path:
            name = f"fe_script_{name}"  # never shadow a loaded module (a script called fe.py, numpy.py, ...)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CLIError(f"cannot import {entry_point!r} as a Python script")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    if os.path.isdir(entry_point):
        raise CLIError(f"{entry_point!r} is a directory; give the script file that defines get_estimator()")
    if _looks_like_module_name(entry_point):
        try:
            return importlib.import_module(entry_point)
        except ModuleNotFoundError as error:
            if error.name is not None and entry_point.startswith(error.name):
                raise CLIError(f"no such file or module: {entry_point!r}") from error
            raise
    raise CLIError(f"no such file: {entry_point!r}")


def find_get_estimator(module: ModuleType, entry_point: str) -> Callable[..., Any]:
    """The module's `get_estimator` function.

    Raises:
        CLIError: If the module defines no callable `get_estimator`.
    """
    function = getattr(module, "get_estimator", None)
    if function is None:
        raise CLIError(f"{entry_point} defines no get_estimator() function; fe train/test call "
                       f"get_estimator(**arguments) and run the Estimator it returns")
    if not callable(function):
        raise CLIError(f"get_estimator in {entry_point} is not a function")
    return function
