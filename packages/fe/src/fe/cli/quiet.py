"""TensorFlow's start-up lines, hidden when `fe train` / `fe test` / `fe run` load a TensorFlow script.

Importing TensorFlow writes, from C++ and before it reads TF_CPP_MIN_LOG_LEVEL, lines such as

    WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
    I0000 00:00:1795812410.933947   22867 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU ...

(twice with current TensorFlow). When the script names TensorFlow or Keras, the `fe` command imports TensorFlow
itself first with standard error captured, then prints everything captured except those start-up lines; a user who
set TF_CPP_MIN_LOG_LEVEL (0 shows everything) gets TensorFlow's lines untouched. Nothing else is captured: the
script's own output and warnings print as they are written.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import tempfile
from typing import Iterator, Optional

__all__ = ["quiet_tensorflow_start", "TF_START_NOISE"]

#: TensorFlow's start-up lines (their timestamps and process ids vary).
TF_START_NOISE = re.compile(r"All log messages before absl::InitializeLog\(\) is called|"
                            r"cudart_stub\.cc:\d+\] Could not find cuda drivers|"
                            r"port\.cc:\d+\] oneDNN custom operations are on|"
                            r"cpu_feature_guard\.cc:\d+\]|^To enable the following instructions: |"
                            r"cuda_platform\.cc:\d+\] failed call to cuInit|cuda_executor\.cc:\d+\] failed call")
_NAMES_TF = re.compile(rb"\b(tensorflow|keras|tf_keras|fe_tf)\b")


def _source_of(entry_point: str) -> Optional[str]:
    if os.path.isfile(entry_point):
        return entry_point
    try:
        spec = importlib.util.find_spec(entry_point)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and os.path.isfile(spec.origin) else None


def _uses_tensorflow(entry_point: str) -> bool:
    path = _source_of(entry_point)
    if path is None:
        return False
    try:
        with open(path, "rb") as file:
            return bool(_NAMES_TF.search(file.read()))
    except OSError:
        return False


@contextlib.contextmanager
def _stderr_captured() -> Iterator[None]:
    """Standard error (the file descriptor: C++ writes there too) into a file; on exit, what it held is printed
    without TensorFlow's start-up lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode(errors="replace")
            kept = [line for line in text.splitlines(keepends=True) if not TF_START_NOISE.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def quiet_tensorflow_start(entry_point: str) -> None:
    """Import TensorFlow now, without its start-up lines, when `entry_point` (a script or module) names TensorFlow
    or Keras and TensorFlow is installed, not yet imported, and the user chose no TF_CPP_MIN_LOG_LEVEL."""
    if ("tensorflow" in sys.modules or "TF_CPP_MIN_LOG_LEVEL" in os.environ
            or importlib.util.find_spec("tensorflow") is None or not _uses_tensorflow(entry_point)):
        return
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"  # what fe_tf chooses when it is first to import TensorFlow
    try:
        with _stderr_captured():
            import tensorflow  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except Exception:  # pylint: disable=broad-except  (a broken install: the script's own import says why)
        pass
