"""fe's own warnings shown as fe's lines: `FastEstimator-Warn: <message>`, not Python's
`/path/to/fe_core/module.py:85: UserWarning: <message>` followed by a line of fe's source.

They stay real warnings (`FEWarning`, a UserWarning): `warnings.catch_warnings`, `-W error` and pytest see them as
before. Only how Python prints a warning of this category changes; every other warning prints as it did.
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

__all__ = ["FEWarning", "fe_warn"]


class FEWarning(UserWarning):
    """A warning fe gives about the user's setup (printed as a `FastEstimator-Warn:` line)."""


def _format(message: Any, category: Any, filename: str, lineno: int, line: Optional[str] = None) -> str:
    if isinstance(category, type) and issubclass(category, FEWarning):
        return f"FastEstimator-Warn: {message}\n"
    return _format.previous(message, category, filename, lineno, line)  # type: ignore[attr-defined]


def _install() -> None:
    """Put `_format` in front of the current `warnings.formatwarning` (once)."""
    current = warnings.formatwarning
    if getattr(current, "fe_lines", False):
        return
    _format.previous = current  # type: ignore[attr-defined]
    _format.fe_lines = True  # type: ignore[attr-defined]
    warnings.formatwarning = _format


def fe_warn(message: str, stacklevel: int = 2) -> None:
    """Warn with `FEWarning`, printed as one `FastEstimator-Warn: message` line.

    Args:
        message: What to say.
        stacklevel: As for `warnings.warn` (2: the caller's caller).
    """
    _install()
    warnings.warn(message, FEWarning, stacklevel=stacklevel + 1)
