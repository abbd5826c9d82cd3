"""`Suppressor`: silence everything a block prints, from Python and from C libraries alike."""
from __future__ import annotations

import atexit
import os
import sys
import tempfile
from typing import Any, ClassVar, List, Optional, Set

from fe_core.export import fe_export

__all__ = ["Suppressor"]


@fe_export("fe.util.util.Suppressor", "fe.util.Suppressor")
class Suppressor:
    """A context manager that silences output of function calls.

    The process-level stdout and stderr (file descriptors 1 and 2, where C/C++ libraries write) are redirected for
    the duration of the block, and Python's `sys.stdout` is replaced by this object (unless `allow_pyprint`).

    Example:
        >>> x = lambda: print("hello")
        >>> x()
        hello
        >>> with Suppressor():
        ...     x()
        >>> x()
        hello

    Args:
        allow_pyprint: Whether to allow python printing to occur still within this scope (and therefore only silence
            printing from non-python sources like C).
        show_if_exception: Whether to retroactively show print messages if an exception is raised from within the
            suppressor scope.
    """

    _stash_files: ClassVar[Set[str]] = set()
    _teardown_registered: ClassVar[bool] = False

    def __init__(self, allow_pyprint: bool = False, show_if_exception: bool = False) -> None:
        self.allow_pyprint = allow_pyprint
        self.show_if_exception = show_if_exception
        self._saved_fds: List[int] = []
        self._sink_fd: Optional[int] = None
        self._stash_path: Optional[str] = None
        self._py_stash: List[str] = []
        self._old_stdout: Any = None
        self._old_stderr: Any = None
        self._pyprint_stream: Any = None

    def __enter__(self) -> "Suppressor":
        self._flush_python_streams()
        if self.show_if_exception:
            self._register_teardown()
            descriptor, self._stash_path = tempfile.mkstemp(prefix="fe_suppressor_", suffix=".log")
            Suppressor._stash_files.add(self._stash_path)
            self._sink_fd = descriptor
        else:
            self._sink_fd = os.open(os.devnull, os.O_WRONLY)
        self._saved_fds = [os.dup(1), os.dup(2)]
        os.dup2(self._sink_fd, 1)
        os.dup2(self._sink_fd, 2)
        self._old_stdout, self._old_stderr = sys.stdout, sys.stderr
        if not self.allow_pyprint:
            sys.stdout = self
            sys.stderr = self
        elif _writes_to_fd(self._old_stdout, 1):
            # python's stdout writes to fd 1, which is silenced now: give python prints their own copy of the real fd
            self._pyprint_stream = os.fdopen(os.dup(self._saved_fds[0]), "w", buffering=1)
            sys.stdout = self._pyprint_stream
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        self._flush_python_streams()
        sys.stdout, sys.stderr = self._old_stdout, self._old_stderr
        if self._pyprint_stream is not None:
            self._pyprint_stream.close()
            self._pyprint_stream = None
        os.dup2(self._saved_fds[0], 1)
        os.dup2(self._saved_fds[1], 2)
        for descriptor in self._saved_fds:
            os.close(descriptor)
        self._saved_fds = []
        os.close(self._sink_fd)
        self._sink_fd = None
        if self._stash_path is not None:
            if exc_type is not None:
                self._replay()
            _remove(self._stash_path)
            Suppressor._stash_files.discard(self._stash_path)
            self._stash_path = None
        self._py_stash = []

    def _replay(self) -> None:
        with open(self._stash_path, "r", encoding="utf-8", errors="replace") as stream:
            native = stream.read()
        out = sys.stdout
        if native:
            out.write(native)
        if self._py_stash:
            out.write("".join(self._py_stash))
        out.flush()

    @staticmethod
    def _flush_python_streams() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, ValueError, OSError):
                pass

    def write(self, dummy: str) -> None:
        """A function which is invoked during print calls: the text is dropped (or kept for `show_if_exception`).

        Args:
            dummy: The string which wanted to be printed.
        """
        if self.show_if_exception:
            self._py_stash.append(dummy)

    def flush(self) -> None:
        """A function to empty the current print buffer. No-op in this case."""
        return None

    def isatty(self) -> bool:
        """Suppressed output is never a terminal."""
        return False

    @classmethod
    def _register_teardown(cls) -> None:
        if not cls._teardown_registered:
            atexit.register(cls.teardown)
            cls._teardown_registered = True

    @staticmethod
    def teardown() -> None:
        """Clean up the stash files (kept for `show_if_exception`) when the program exits."""
        for path in list(Suppressor._stash_files):
            _remove(path)
            Suppressor._stash_files.discard(path)


def _writes_to_fd(stream: Any, descriptor: int) -> bool:
    try:
        return stream.fileno() == descriptor
    except (AttributeError, ValueError, OSError):
        return False


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
