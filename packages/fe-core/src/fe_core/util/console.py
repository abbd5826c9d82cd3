"""Console output: warnings in yellow (`warn`), copying stdout into a log file (`LogSplicer`), notebook detection
(`in_notebook`) and the banner (`draw`)."""
from __future__ import annotations

import os
import sys
from typing import Any, Optional, TextIO

from fe_core.export import fe_export

__all__ = ["warn", "in_notebook", "draw", "LogSplicer"]

_YELLOW = "\033[93m"
_RESET = "\033[00m"


@fe_export("fe.util.base_util.warn", "fe.util.warn")
def warn(message: str) -> None:
    """Print a yellow warning message (prefixed with 'FastEstimator-Warn: ') to catch the user's attention.

    Example:
        >>> warn("the learning rate is huge")  # doctest: +SKIP
        FastEstimator-Warn: the learning rate is huge

    Args:
        message: The warning to print.
    """
    print(f"{_YELLOW}FastEstimator-Warn: {message}{_RESET}")


@fe_export("fe.util.base_util.in_notebook", "fe.util.in_notebook")
def in_notebook() -> bool:
    """Determine whether the code is running inside a Jupyter notebook (an IPython kernel with a ZMQ shell).

    Returns:
        True iff the code is executing inside a Jupyter notebook.
    """
    ipython = sys.modules.get("IPython")  # a notebook kernel has always imported IPython already
    if ipython is None:
        return False
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    return shell is not None and "zmqshell" in type(shell).__module__ + "." + type(shell).__name__.lower()


_BANNER = """
+-----------------------------------------+
|                                         |
|     F a s t   E s t i m a t o r         |
|        (fe: Pipeline, Network,          |
|         Estimator, Traces)              |
|                                         |
+-----------------------------------------+"""


@fe_export("fe.util.util.draw", "fe.util.draw")
def draw() -> None:
    """Print our name (a FastEstimator banner) to stdout."""
    print(_BANNER)


@fe_export("fe.util.base_util.LogSplicer", "fe.util.LogSplicer")
class LogSplicer:
    """A context manager that appends everything printed to stdout into a file, while still printing it.

    Example:
        >>> with LogSplicer("/tmp/run.log"):  # doctest: +SKIP
        ...     print("epoch 1")  # shown on the console and appended to /tmp/run.log

    Args:
        log_path: The path/filename into which to append the current stdout.
    """

    def __init__(self, log_path: str) -> None:
        self.log_path = log_path
        self.log_file: Optional[TextIO] = None
        self.stdout: Optional[TextIO] = None
        self._start = 0

    def __enter__(self) -> "LogSplicer":
        parent = os.path.dirname(os.path.abspath(self.log_path))
        os.makedirs(parent, exist_ok=True)
        self.log_file = open(self.log_path, "a", encoding="utf-8")  # pylint: disable=consider-using-with
        self._start = self.log_file.tell()
        self.stdout = sys.stdout
        sys.stdout = self
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.stdout = self.stdout
        if self.stdout is not None:
            self.stdout.flush()
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None

    def write(self, output: str) -> None:
        """Write `output` to the log file and to the real stdout.

        Args:
            output: The text printed.
        """
        if self.log_file is not None:
            self.log_file.write(output)
        if self.stdout is not None:
            self.stdout.write(output)

    def flush(self) -> None:
        """Flush both the real stdout and the log file."""
        if self.stdout is not None:
            self.stdout.flush()
        if self.log_file is not None:
            self.log_file.flush()

    def getvalue(self) -> str:
        """The text printed so far: the wrapped stdout's own `getvalue()` when it has one (a StringIO, as in tests and
        some notebook shells), else what this splice appended to the log file.

        Returns:
            The captured text.
        """
        getvalue = getattr(self.stdout, "getvalue", None)
        if callable(getvalue):
            return getvalue()
        if self.log_file is not None:
            self.log_file.flush()
        with open(self.log_path, "r", encoding="utf-8") as stream:
            stream.seek(self._start)
            return stream.read()

    def isatty(self) -> bool:
        """Whether the wrapped stdout is a terminal (so progress bars keep their behaviour)."""
        return bool(self.stdout is not None and getattr(self.stdout, "isatty", lambda: False)())
