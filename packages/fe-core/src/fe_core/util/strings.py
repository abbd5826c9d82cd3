"""String helpers: pretty metric names, prefix/suffix stripping, and whether a string is a number."""
from __future__ import annotations

import re
from typing import Any, Optional, overload

from fe_core.export import fe_export

__all__ = ["prettify_metric_name", "strip_prefix", "strip_suffix", "is_number"]

_CAMEL_BOUNDARY = re.compile(r"([a-z])([A-Z])")


@fe_export("fe.util.base_util.prettify_metric_name", "fe.util.prettify_metric_name")
def prettify_metric_name(metric: str) -> str:
    """Add spaces to camel case words, then swap _ for space, and capitalize each word.

    Example:
        >>> prettify_metric_name("myUgly_loss")
        'My Ugly Loss'

    Args:
        metric: A string to be formatted.

    Returns:
        The formatted version of `metric`.
    """
    spaced = _CAMEL_BOUNDARY.sub(r"\1 \2", metric).replace("_", " ")
    return " ".join(word[:1].upper() + word[1:].lower() for word in spaced.split())


@overload
def strip_suffix(target: None, suffix: Optional[str]) -> None:
    ...


@overload
def strip_suffix(target: str, suffix: Optional[str]) -> str:
    ...


@fe_export("fe.util.base_util.strip_suffix", "fe.util.strip_suffix")
def strip_suffix(target: Optional[str], suffix: Optional[str]) -> Optional[str]:
    """Remove the given `suffix` from the `target` if it is present there.

    Example:
        >>> strip_suffix("astring.json", ".json"), strip_suffix("astring.json", ".yson")
        ('astring', 'astring.json')

    Args:
        target: A string to be formatted (None is returned as None).
        suffix: A string to be removed from `target` (None or '' removes nothing).

    Returns:
        The formatted version of `target`.
    """
    if target is None or not suffix or not target.endswith(suffix):
        return target
    return target[:-len(suffix)]


@overload
def strip_prefix(target: None, prefix: Optional[str]) -> None:
    ...


@overload
def strip_prefix(target: str, prefix: Optional[str]) -> str:
    ...


@fe_export("fe.util.base_util.strip_prefix", "fe.util.strip_prefix")
def strip_prefix(target: Optional[str], prefix: Optional[str]) -> Optional[str]:
    """Remove the given `prefix` from the `target` if it is present there.

    Example:
        >>> strip_prefix("astring.json", "ast"), strip_prefix("astring.json", "asa")
        ('ring.json', 'astring.json')

    Args:
        target: A string to be formatted (None is returned as None).
        prefix: A string to be removed from `target` (None or '' removes nothing).

    Returns:
        The formatted version of `target`.
    """
    if target is None or not prefix or not target.startswith(prefix):
        return target
    return target[len(prefix):]


@fe_export("fe.util.base_util.is_number", "fe.util.is_number")
def is_number(arg: Any) -> bool:
    """Check if a given string can be converted into a number.

    Example:
        >>> is_number("13.7"), is_number("ae13.7"), is_number("1e-3")
        (True, False, True)

    Args:
        arg: A potentially numeric input string.

    Returns:
        True iff `arg` represents a number.
    """
    try:
        float(arg)
    except (TypeError, ValueError):
        return False
    return True
