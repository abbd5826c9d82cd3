"""Where an op, trace or slicer runs: execution modes, dataset ids and key names.

Modes are 'train', 'eval', 'test' and 'infer'. A string starting with '!' means every mode except that one, so
`parse_modes({"!train"})` is `{"eval", "test", "infer"}`. Dataset ids follow the same rule, but are only checked here:
the complement of a ds_id can only be taken once the available ids are known (see `ds_id_matches`).
"""
from __future__ import annotations

from typing import List, Set

from fe_core.config_error import ConfigurationError
from fe_core.export import fe_export

__all__ = ["ALL_MODES", "InvalidNameError", "parse_modes", "check_ds_id", "check_io_names", "ds_id_matches"]

ALL_MODES = frozenset({"train", "eval", "test", "infer"})
_FORBIDDEN_DS_ID_CHARS = (":", ";", "|", "!")
_FORBIDDEN_KEY_CHARS = (":", ";")


class InvalidNameError(ConfigurationError):
    """An invalid mode, dataset id or key name. It is a ValueError, and an AssertionError as FastEstimator documents."""


@fe_export("fe.util.base_util.parse_modes", "fe.util.parse_modes")
def parse_modes(modes: Set[str]) -> Set[str]:
    """Expand a set of mode strings, resolving '!mode' negations.

    Args:
        modes: Mode names, possibly negated ('!train'). An empty set means "every mode".

    Returns:
        The explicit set of modes (empty when `modes` is empty).

    Raises:
        InvalidNameError: (a ValueError and AssertionError) If a mode is unknown, or negated and plain modes are mixed.

    Example:
        >>> sorted(parse_modes({"!train"}))
        ['eval', 'infer', 'test']
    """
    if isinstance(modes, str):  # a lone mode string, not an iterable of characters
        modes = {modes}
    negated = {mode for mode in modes if isinstance(mode, str) and mode.startswith("!")}
    plain = set(modes) - negated
    for mode in plain:
        if mode not in ALL_MODES:
            raise InvalidNameError(f"Unknown mode {mode!r}: expected one of {sorted(ALL_MODES)} or a '!mode' "
                                   "negation")
    for mode in negated:
        if mode[1:] not in ALL_MODES:
            raise InvalidNameError(f"Unknown mode {mode!r}: after '!' expected one of {sorted(ALL_MODES)}")
    if negated and plain:
        raise InvalidNameError(f"Cannot mix negated and plain modes: {sorted(modes)}")
    if negated:
        return set(ALL_MODES) - {mode[1:] for mode in negated}
    return plain


@fe_export("fe.util.base_util.check_ds_id", "fe.util.check_ds_id")
def check_ds_id(ds_ids: Set[str]) -> Set[str]:
    """Validate dataset ids.

    Ids may not contain ':', ';', '|' or '!' (except a single leading '!' meaning "every ds_id but this one"), and a
    set may not mix plain ids with negated ones.

    Args:
        ds_ids: The dataset ids to check.

    Returns:
        The same set (a lone string is wrapped in a set).

    Raises:
        InvalidNameError: (a ValueError and AssertionError) On an invalid id or a mix of plain and negated ids.

    Example:
        >>> check_ds_id({"!ds1"})
        {'!ds1'}
    """
    if isinstance(ds_ids, str):  # a lone id, not an iterable of characters
        ds_ids = {ds_ids}
    negated = 0
    for ds_id in ds_ids:
        if not isinstance(ds_id, str):
            raise InvalidNameError(f"Dataset ids must be strings, got {ds_id!r} ({type(ds_id).__name__})")
        body = ds_id[1:] if ds_id.startswith("!") else ds_id
        negated += ds_id.startswith("!")
        if not body:
            raise InvalidNameError(f"Dataset id {ds_id!r} is empty")
        bad = [char for char in _FORBIDDEN_DS_ID_CHARS if char in body]
        if bad:
            raise InvalidNameError(f"Dataset id {ds_id!r} contains forbidden character(s) {bad}; ids may not "
                                   f"contain any of {list(_FORBIDDEN_DS_ID_CHARS)} (only a leading '!' negates)")
    if 0 < negated < len(ds_ids):
        raise InvalidNameError(f"Cannot mix negated and plain dataset ids: {sorted(ds_ids)}")
    return ds_ids


def ds_id_matches(ds_ids: Set[str], ds_id: str) -> bool:
    """Whether an item restricted to `ds_ids` runs on dataset `ds_id`.

    An empty restriction matches every dataset. The unnamed dataset `''` (a mode with a single, unnamed dataset)
    matches blacklists ('!ds1') but no whitelist, as in FastEstimator.
    """
    if not ds_ids:
        return True
    first = next(iter(ds_ids))
    if first.startswith("!"):
        return ("!" + ds_id) not in ds_ids
    return ds_id in ds_ids


@fe_export("fe.util.base_util.check_io_names", "fe.util.check_io_names")
def check_io_names(names: List[str]) -> List[str]:
    """Validate input/output key names.

    Keys must be non-empty strings, may not contain ':' or ';' (the log line separators), and may contain at most one
    '|' (as in a per-dataset key such as 'acc|ds1' that a trace may read). The wildcard '*' is allowed on its own.

    Raises:
        InvalidNameError: (a ValueError and AssertionError) On an invalid key.

    Example:
        >>> check_io_names(["x", "y_pred", "acc|ds1"])
        ['x', 'y_pred', 'acc|ds1']
    """
    for name in names:
        if not isinstance(name, str) or not name:
            raise InvalidNameError(f"Key names must be non-empty strings, got {name!r}")
        bad = [char for char in _FORBIDDEN_KEY_CHARS if char in name]
        if bad:
            raise InvalidNameError(f"Key {name!r} contains forbidden character(s) {bad}; keys may not contain "
                                   f"{list(_FORBIDDEN_KEY_CHARS)}")
        if name.count("|") > 1:
            raise InvalidNameError(f"Key {name!r} contains more than one '|'; only 'key|ds_id' is allowed")
    return names
