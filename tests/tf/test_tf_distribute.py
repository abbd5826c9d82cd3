"""MirroredStrategy support: the checkpoint reducer here, and training on two logical CPUs in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from fe_core.framework import get_backend
from fe_core.checkpoint.codec import StateCodec

CHECK_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mirrored_strategy_check.py")


def test_the_reducer_stores_a_mirrored_strategy_as_the_strategy_active_at_load_time() -> None:
    reducer = next(r for r in get_backend("tf").state_reducers() if r.name == "tf.MirroredStrategy")
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    assert reducer.name == "tf.MirroredStrategy"
    assert reducer.matches(strategy) and not reducer.matches(tf.distribute.get_strategy())
    codec = StateCodec(reducers=[reducer])
    data, arrays = codec.encode({"strategy": strategy, "count": 3})
    restored = codec.decode(data, arrays)
    assert restored == {"strategy": tf.distribute.get_strategy(), "count": 3}


@pytest.mark.slow  # a fresh interpreter importing TensorFlow
def test_training_and_checkpoints_under_a_mirrored_strategy_on_two_logical_cpus() -> None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    completed = subprocess.run([sys.executable, CHECK_SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    output = completed.stdout
    assert completed.returncode == 0, output[-3000:] + completed.stderr[-3000:]
    assert output.count(" ok") >= 20 and output.strip().endswith("ALL OK")
