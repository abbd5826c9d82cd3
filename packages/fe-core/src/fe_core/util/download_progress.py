"""Text progress bars for downloads: `bar_custom` (the bar) and `callback_progress` (a urlretrieve-style hook).

`bar_custom(current, total, width)` returns one line that fits in `width - 1` characters (one column stays free so a
Windows console does not wrap), choosing the richest of these layouts that fits:

    [=====     ] 1.20 / 2.40 MB
    1.20 / 2.40 MB
    [=====     ]

and, when the total size is unknown (<= 0): `1.20 MB / unknown`, then `1.20 MB`. Nothing fits: an empty string.
"""
from __future__ import annotations

import shutil
import sys
from typing import Callable

from fe_core.export import fe_export

__all__ = ["bar_custom", "callback_progress"]


def _megabytes(value: float) -> str:
    return f"{value / 1e6:.2f}"


@fe_export("fe.util.wget_util.bar_custom", "fe.util.bar_custom")
def bar_custom(current: float, total: float, width: int = 80) -> str:
    """Return a progress bar string for `current` out of `total` bytes that fits in `width` columns.

    The result never contains control characters (such as the carriage return that moves the cursor back) and is at
    most `width - 1` characters long.

    Example:
        >>> bar_custom(1_200_000, 2_400_000, width=40)
        '[===========           ] 1.20 / 2.40 MB'
        >>> bar_custom(1_200_000, 2_400_000, width=16)
        '1.20 / 2.40 MB'
        >>> bar_custom(1_200_000, -1)
        '1.20 MB / unknown'

    Args:
        current: The current amount of progress (bytes).
        total: The total amount of progress required by the task (bytes), or <= 0 when unknown.
        width: The available width in characters.

    Returns:
        A formatted string to display the current progress.
    """
    room = int(width) - 1
    if not total or total <= 0:
        for text in (f"{_megabytes(current)} MB / unknown", f"{_megabytes(current)} MB"):
            if len(text) <= room:
                return text
        return ""
    fraction = min(max(current / total, 0.0), 1.0)
    size = f"{_megabytes(current)} / {_megabytes(total)} MB"
    bar_room = room - len(size) - 1  # the bar, a space, the sizes
    if bar_room >= 3:
        return _bar(fraction, min(bar_room, 50)) + " " + size
    if len(size) <= room:
        return size
    if room >= 3:
        return _bar(fraction, room)
    return ""


def _bar(fraction: float, width: int) -> str:
    inner = width - 2
    filled = int(fraction * inner)
    return "[" + "=" * filled + " " * (inner - filled) + "]"


@fe_export("fe.util.wget_util.callback_progress", "fe.util.callback_progress")
def callback_progress(blocks: int, block_size: int, total_size: int,
                      bar_function: Callable[[int, int, int], str]) -> None:
    """Draw a progress line on stdout; the signature of a `urllib.request.urlretrieve` report hook plus the bar.

    Called once when the connection opens (`blocks == 0`) and then once per block. The line is redrawn in place
    (it starts with a carriage return) at the terminal's width; `sys.stdout.write` is used rather than print so the
    line can use every column but the last without a linefeed.

    Example:
        >>> import functools, urllib.request
        >>> hook = functools.partial(callback_progress, bar_function=bar_custom)
        >>> urllib.request.urlretrieve("https://example.com/f.zip", "f.zip", reporthook=hook)  # doctest: +SKIP

    Args:
        blocks: Number of blocks transferred so far.
        block_size: The size of a block in bytes.
        total_size: The total size in bytes, or -1 when the server did not say.
        bar_function: Returns the line to draw from (current, total, width), e.g. `bar_custom`.
    """
    width = shutil.get_terminal_size((80, 24)).columns
    current = blocks * block_size
    if total_size > 0:
        current = min(current, total_size)
    line = bar_function(current, total_size, width)
    if line:
        sys.stdout.write("\r" + line)
        sys.stdout.flush()
