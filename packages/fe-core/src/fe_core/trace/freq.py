"""`Freq` and `parse_freq`: how often a trace acts ('epoch', 'step', '5s', '2e', 100, ...)."""
from __future__ import annotations

import numbers
import re
from typing import NamedTuple, Union

from fe_core.export import fe_export

__all__ = ["Freq", "parse_freq"]

_FREQ_PATTERN = re.compile(r"^([0-9]+)([se])$")


@fe_export("fe.trace.trace.Freq")
class Freq(NamedTuple):
    """A frequency: every `freq` steps (`is_step` True) or every `freq` epochs (`is_step` False).

    `freq` 0 means never.

    Example:
        >>> Freq(is_step=True, freq=100)
        Freq(is_step=True, freq=100)
    """
    is_step: bool
    freq: int


@fe_export("fe.trace.trace.parse_freq")
def parse_freq(freq: Union[None, str, int]) -> Freq:
    """Convert a user's frequency argument into a `Freq`.

    Args:
        freq: One of None (never), 'step' or 's' (every step), 'epoch' or 'e' (every epoch), '<n>s' (every n steps),
            '<n>e' (every n epochs), or a positive integer n (every n steps).

    Returns:
        Whether the trace runs on a step or an epoch basis, and how often.

    Raises:
        ValueError: If `freq` is not a positive integer, a recognised string, or None.

    Example:
        >>> parse_freq("epoch"), parse_freq("5s")
        (Freq(is_step=False, freq=1), Freq(is_step=True, freq=5))
        >>> parse_freq(3), parse_freq(None)
        (Freq(is_step=True, freq=3), Freq(is_step=False, freq=0))
    """
    if freq is None:
        return Freq(False, 0)
    if isinstance(freq, numbers.Integral) and not isinstance(freq, bool):
        if freq < 1:
            raise ValueError(f"Frequency argument must be a positive integer but got {freq}")
        return Freq(True, int(freq))
    if isinstance(freq, str):
        if freq in ("step", "s"):
            return Freq(True, 1)
        if freq in ("epoch", "e"):
            return Freq(False, 1)
        parts = _FREQ_PATTERN.match(freq)
        if parts is None:
            raise ValueError(f"Frequency argument must be formatted like <int><s|e> (or be 'step', 's', 'epoch', 'e')"
                             f" but got {freq!r}")
        count = int(parts[1])
        if count < 1:
            raise ValueError(f"Frequency argument must be a positive integer but got {freq!r}")
        return Freq(parts[2] == "s", count)
    raise ValueError(f"Unrecognized type passed as frequency: {type(freq)} ({freq!r}); expected None, a positive int,"
                     f" 'step', 'epoch', '<int>s' or '<int>e'")
