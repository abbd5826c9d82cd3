"""In a fresh interpreter: using the tf backend never tries to import PyTorch, and `seed` makes draws repeat."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys

    attempts = []

    class RecordTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                attempts.append(name)
            return None

    sys.meta_path.insert(0, RecordTorch())

    import numpy as np
    import keras
    from fe_core.framework import backend_for_model
    from fe_core.build import build
    from fe_core.network import make_network
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
    from fe_tf import LeNet

    model = build(model_fn=LeNet, optimizer_fn="adam")
    assert backend_for_model(model).name == "tf"
    network = make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=model, loss_name="ce")])
    with network(mode="train", epoch=1):
        network.run_step({"x": np.zeros((2, 28, 28, 1), np.float32), "y": np.array([0, 1])})
    import tensorflow as tf
    from fe_core.framework import get_backend

    def draws():
        return (tf.random.uniform([3]).numpy(), tf.random.get_global_generator().normal([3]).numpy(),
                keras.random.normal((3,)).numpy(), LeNet().weights[0].numpy())

    get_backend("tf").seed(5)  # also switches TensorFlow to deterministic kernels, hence this separate process
    first = draws()
    get_backend("tf").seed(5)
    print("SEEDED", all(np.array_equal(a, b) for a, b in zip(first, draws())))
    print("TORCH", sorted(set(attempts)), "torch" in sys.modules)
""")


@pytest.mark.slow  # a fresh interpreter importing TensorFlow
@pytest.mark.keras3  # its script draws with keras.random (Keras 3's)
def test_building_and_training_a_tf_model_does_not_import_torch_and_seeding_repeats_draws() -> None:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    completed = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "TORCH [] False" in completed.stdout
    assert "SEEDED True" in completed.stdout
