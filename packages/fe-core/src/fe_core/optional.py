"""`import_optional`: import a library that belongs to one of fe's optional extras, or say which extra to install.

fe-core's base install is numpy + natsort. Features that need more (image ops need albumentations and OpenCV, figures
need plotly/matplotlib, CSVDataset needs pandas, ...) import their library through this function, lazily, when they
are used. Without the library, the user gets one line naming the feature and the extra:

    ImportError: ReadImage needs OpenCV (cv2), which is not installed: pip install "./packages/fe-core[image]" from
    a clone of fe (pip install "fe-core[image]" once released)

Example:
    >>> np = import_optional("numpy", extra="image", feature="ReadImage")
    >>> np.__name__
    'numpy'
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

from fe_core.install_hint import install_command

__all__ = ["import_optional", "MissingExtraError"]

# Friendly names of the libraries behind each top-level module, for the message.
_LIBRARIES = {
    "cv2": "OpenCV (cv2)",
    "albumentations": "albumentations",
    "PIL": "Pillow (PIL)",
    "pandas": "pandas",
    "plotly": "plotly",
    "matplotlib": "matplotlib",
    "pylatex": "PyLaTeX",
    "h5py": "h5py",
    "scipy": "SciPy",
    "tqdm": "tqdm",
}


class MissingExtraError(ImportError):
    """An optional library is not installed; the message names the fe-core extra that installs it."""


def import_optional(module: str, extra: str, feature: Optional[str] = None) -> ModuleType:
    """Import `module`, or raise a one-line MissingExtraError naming `extra`.

    Args:
        module: The module to import ('cv2', 'albumentations', 'pandas', 'plotly.graph_objects', ...).
        extra: The extra of `fe` / `fe-core` that installs it ('image', 'table', 'plot', 'report', 'data').
        feature: What needs it (a class or function name), for the message.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: If the module (or a library it needs) cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.split(".")[0]
        library = _LIBRARIES.get(top, top)
        who = feature or module
        raise MissingExtraError(f"{who} needs {library}, which is not installed: "
                                f"{install_command('fe-core', extra)}") from error
