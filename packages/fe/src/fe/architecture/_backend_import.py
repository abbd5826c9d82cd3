"""A clear error when an architecture subpackage is imported without its backend installed."""
from __future__ import annotations

import importlib.util

__all__ = ["require_backend"]


def require_backend(package: str, extra: str, where: str) -> None:
    """Raise an ImportError naming the `fe[...]` extra to install when `package` (fe_torch / fe_tf) is missing.

    Raises:
        ImportError: If `package` is not installed.
    """
    if importlib.util.find_spec(package) is None:
        raise ImportError(f"{where} needs the {package.replace('_', '-')} backend, which is not installed: "
                          f"pip install 'fe[{extra}]'")
