"""Issue 30 item 11 (TensorFlow): when fe is the first to import TensorFlow and the user chose no
TF_CPP_MIN_LOG_LEVEL, TensorFlow's C++ start-up lines (cpu_feature_guard, `failed call to cuInit`, ...) are hidden;
a level the user set is kept."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

CODE = """
import os, sys
import fe_tf
import tensorflow as tf
tf.constant(1.0) + 1.0  # start TensorFlow's runtime (device probing happens here)
print(os.environ.get("TF_CPP_MIN_LOG_LEVEL"))
"""


def _run(**env):
    environ = {key: value for key, value in os.environ.items() if key != "TF_CPP_MIN_LOG_LEVEL"}
    environ.update(env, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, env=environ)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip(), result.stderr


def _cpp_lines(stderr):
    """TensorFlow's C++ log lines after it read its log level (absl's 'I0000 ... file.cc:N] ...' format). Two are
    printed before TensorFlow reads the variable, so no level hides them (TF 2.21 prints them even when the user set
    TF_CPP_MIN_LOG_LEVEL=3 before starting Python): the cudart_stub probe and, on CPUs where oneDNN's custom
    operations are on, port.cc's notice about them."""
    return [line for line in stderr.splitlines()
            if line[:1] in "IWEF" and "] " in line and ".cc:" in line
            and "cudart_stub" not in line and " port.cc:" not in line]


@pytest.mark.slow
def test_fe_hides_tensorflows_cpp_start_up_lines_unless_the_user_chose_a_level():
    level, stderr = _run()
    assert level == "3"
    assert _cpp_lines(stderr) == [], stderr
    level, _ = _run(TF_CPP_MIN_LOG_LEVEL="0")
    assert level == "0"  # the user's choice is kept
