"""mkdocs hook of the tutorials: what their executed code blocks print, fe's own log lines included, shows on the page.

markdown-exec (pinned in tools/docs.py) captures only the `print` calls written in a block; fe's Logger, warnings and
everything else a library writes go to the build's stdout/stderr. This hook runs each Python block with stdout and
stderr redirected into one buffer, and the block's own `print` writing there too, so the page shows the output in
the order it happened. Each block's source is also registered with `linecache`, as if it were a file, so that code
which reads the source of functions defined in a block (TensorFlow's AutoGraph, `inspect`) finds it. A block that
raises still fails the strict build (markdown-exec logs a warning).
"""
from __future__ import annotations

import contextlib
import io
import linecache
import sys
from typing import Any

from markdown_exec._internal.formatters import python as _python

_original_run = _python._run_python
_original_exec = _python.exec_python


def _print_to_stdout(buffer: io.StringIO, *texts: Any, end: str = "\n", **kwargs: Any) -> None:  # noqa: ARG001
    sys.stdout.write(" ".join(str(text) for text in texts) + end)


def _run_python(code: str, *args: Any, **kwargs: Any) -> str:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        rest = _original_run(code, *args, **kwargs)
    return stream.getvalue() + rest


def _exec_python(code: str, filename: str, exec_globals: Any = None) -> None:
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    _original_exec(code, filename, exec_globals)


def on_startup(command: str, dirty: bool) -> None:  # noqa: ARG001
    """Install the capturing runner (mkdocs calls this once, before the build)."""
    if not hasattr(_python, "_buffer_print"):
        raise RuntimeError("markdown-exec changed: update docs/tutorials/_exec_hook.py for the pinned version")
    _python._buffer_print = _print_to_stdout
    _python._run_python = _run_python
    _python.exec_python = _exec_python
