"""The exception raised for an invalid configuration: a ValueError (or TypeError) with fe's message, which is also an
AssertionError, because FastEstimator `assert`s the same conditions.

Code written for FastEstimator catches `AssertionError` where its configuration checks fail (invalid ds_ids, a
TensorOp in a Pipeline, models of two frameworks in one Network, a TensorFlow model given a torch optimizer, an unknown
resize mode, ...); code written for fe catches `ValueError` (or `TypeError` where fe raised one). One exception
satisfies both. This module imports nothing from fe, so every module can raise it.

A script that stops on a ConfigurationError (uncaught) prints it as one line naming the user's line that led to it,
without the traceback through fe's internals (`FE_TRACEBACK=1` shows it); `fe train` / `fe test` do the same.

Example:
    >>> try:
    ...     raise ConfigurationError("Pipeline ds_id '!a' must not start with '!'")
    ... except AssertionError as error:
    ...     print(isinstance(error, ValueError), error)
    True Pipeline ds_id '!a' must not start with '!'
"""
from __future__ import annotations

import sys

__all__ = ["ConfigurationError", "ConfigurationTypeError", "configuration_error_line", "wants_traceback"]


class ConfigurationError(ValueError, AssertionError):
    """An invalid configuration: a ValueError, and an AssertionError as FastEstimator raises for the same case, so
    `except ValueError` and `except AssertionError` clauses both catch it."""


class ConfigurationTypeError(TypeError, ConfigurationError):
    """An invalid configuration detected by its type (a TensorOp where a NumpyOp belongs, an optimizer of another
    framework): a TypeError as fe raised before, and a ValueError and an AssertionError (see `ConfigurationError`)."""


# ---------------------------------------------------------------------------------------------------------------------
# One line for a script that stops on a ConfigurationError (`python train.py`, `fe train train.py`): the message says
# everything (fe's checks name the op, key, mode and what was expected), so the traceback through fe's internals that
# would bury it is left out; the line names the user's own line that made the call. FE_TRACEBACK=1 shows the traceback.

_LIBRARIES = frozenset({"fe", "fe_core", "fe_torch", "fe_tf", "torch", "tensorflow", "keras", "tf_keras", "runpy",
                        "importlib", "numpy"})


def configuration_error_line(error: BaseException) -> str:
    """`ConfigurationError: <message> (<file>, line <n>)`: the error on one line, with the last line of the user's
    code (outside fe and the frameworks) that led to it.

    Example:
        >>> configuration_error_line(ConfigurationError("batch_size must be positive"))
        'ConfigurationError: batch_size must be positive'
    """
    where = ""
    trace = error.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        module = str(frame.f_globals.get("__name__", "")).split(".")[0]
        if module not in _LIBRARIES and not frame.f_code.co_filename.startswith("<"):
            where = f" ({frame.f_code.co_filename}, line {trace.tb_lineno})"
        trace = trace.tb_next
    message = " ".join(str(error).split("\n")) if str(error) else ""
    return f"{type(error).__name__}: {message}{where}" if message else f"{type(error).__name__}{where}"


def wants_traceback() -> bool:
    """Whether the user asked for full tracebacks of configuration errors (`FE_TRACEBACK=1`)."""
    import os  # pylint: disable=import-outside-toplevel
    return os.environ.get("FE_TRACEBACK", "").strip().lower() not in ("", "0", "false", "no", "off")


def _excepthook(kind: type, value: BaseException, traceback: object) -> None:
    if isinstance(value, ConfigurationError) and not wants_traceback():
        sys.stderr.write(configuration_error_line(value) + "\n")
        sys.stderr.flush()
        return
    _previous_excepthook(kind, value, traceback)


_previous_excepthook = sys.excepthook
if sys.excepthook is sys.__excepthook__:  # a hook someone else installed (IPython, a debugger) is left alone
    sys.excepthook = _excepthook
