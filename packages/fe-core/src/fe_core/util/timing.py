"""`Timer`: time a block or a function and print how long it took."""
from __future__ import annotations

import time
from contextlib import ContextDecorator
from typing import Any, Optional

from fe_core.export import fe_export

__all__ = ["Timer"]


@fe_export("fe.util.util.Timer", "fe.util.Timer")
class Timer(ContextDecorator):
    """Time a `with` block or (as a decorator) each call of a function, and print '<name> took <t> seconds'.

    The last duration is also kept in `elapsed` (seconds).

    Example:
        >>> with Timer():  # doctest: +SKIP
        ...     sum(range(10**6))
        Task took 0.0162 seconds
        >>> @Timer("T2")
        ... def func():
        ...     return sum(range(10**6))
        >>> func()  # doctest: +SKIP
        T2 took 0.0159 seconds

    Args:
        name: What to call the timed task in the printed line.
    """

    def __init__(self, name: str = "Task") -> None:
        self.name = name
        self.start: Optional[float] = None
        self.elapsed: Optional[float] = None

    def __enter__(self) -> "Timer":
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.elapsed = time.perf_counter() - self.start
        print(f"{self.name} took {self.elapsed:.4g} seconds")
