"""fe does not make TensorFlow's start noisier than a plain Keras script (issue: absl/CUDA lines on CPU machines)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PLAIN = """
import numpy as np, keras
x = np.random.rand(64, 4).astype("float32"); y = np.random.randint(0, 2, 64)
m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
m.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
m.fit(x, y, epochs=1, verbose=0)
"""

FE = """
import numpy as np, keras
import fe
from fe.dataset import NumpyDataset
from fe.op.tensorop.loss import CrossEntropy
from fe.op.tensorop.model import ModelOp, UpdateOp
x = np.random.rand(64, 4).astype("float32"); y = np.random.randint(0, 2, 64)
model = fe.build(lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]), "adam")
network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="p"), CrossEntropy(inputs=("p", "y"), outputs="ce"),
                          UpdateOp(model=model, loss_name="ce")])
fe.Estimator(pipeline=fe.Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=32), network=network,
             epochs=1, log_steps=None).fit()
"""


def _stderr_lines(code: str, **env: str) -> list:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1", **env))
    assert result.returncode == 0, result.stderr
    return [line for line in result.stderr.splitlines() if line.strip()]


@pytest.mark.slow
def test_fe_adds_no_line_to_tensorflows_own_start_noise():
    plain, ours = _stderr_lines(PLAIN), _stderr_lines(FE)
    # TensorFlow's own lines (absl, CUDA probing) carry timestamps and pids: compare what they say, not their prefix
    def said(lines):
        return sorted(line.split("] ", 1)[-1] for line in lines)
    assert len(ours) <= len(plain), "\n".join(ours)
    assert set(said(ours)) <= set(said(plain)), "\n".join(ours)
