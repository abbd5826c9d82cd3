"""Under TF_USE_LEGACY_KERAS=1 fe uses the Keras TensorFlow resolved (tf-keras), whatever the script imported first.

Keras 2 scripts start with `import tensorflow as tf` and `from tensorflow.keras import layers` (or `from tensorflow
import keras`) before or after importing fe; fe must then accept the models and optimizers of `tf.keras` /
`tf.optimizers` (tf-keras' classes), as FastEstimator did. Each import order runs in a fresh interpreter (the order is
what is tested), all of them side by side. Run by the tf-keras2 suite (marked keras2).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Dict

import pytest

pytestmark = pytest.mark.keras2

# What the script imports first; fe_tf itself is imported by `build` (through the backend registry) afterwards,
# except in "fe_tf_first".
IMPORT_ORDERS: Dict[str, str] = {
    "tensorflow_then_tensorflow_keras_layers": "import tensorflow as tf\nfrom tensorflow.keras import layers",
    "tensorflow_only": "import tensorflow as tf\nlayers = tf.keras.layers",
    "from_tensorflow_import_keras": "from tensorflow import keras\nimport tensorflow as tf\nlayers = keras.layers",
    "fe_tf_first": "import fe_tf\nimport tensorflow as tf\nfrom tensorflow.keras import layers",
}

# After the imports: build models with the optimizers of `tf.optimizers` and `tf.keras.optimizers.legacy`, train two
# steps, and report which Keras fe chose.
BODY = textwrap.dedent("""
    import json
    import numpy as np
    from fe_core.build import build
    from fe_core.dataset import NumpyDataset
    from fe_core.estimator import Estimator
    from fe_core.network import make_network
    from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
    from fe_core.pipeline import Pipeline

    def model_fn():
        return tf.keras.Sequential([tf.keras.Input((4,)), layers.Dense(3, activation="softmax")])

    current = build(model_fn=model_fn, optimizer_fn=lambda: tf.optimizers.Adam(0.01))
    legacy = build(model_fn=model_fn, optimizer_fn=lambda: tf.keras.optimizers.legacy.Adam(0.01))
    x = np.random.default_rng(0).standard_normal((8, 4)).astype("float32")
    y = (np.arange(8) % 3).astype("int64")
    before = [w.numpy().copy() for w in current.trainable_variables + legacy.trainable_variables]
    ops = []
    for model, name in ((current, "a"), (legacy, "b")):
        ops += [ModelOp(model=model, inputs="x", outputs="pred_" + name),
                CrossEntropy(inputs=("pred_" + name, "y"), outputs="ce_" + name),
                UpdateOp(model=model, loss_name="ce_" + name)]
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=4),
              network=make_network(ops=ops), epochs=1, log_steps=None).fit()
    after = current.trainable_variables + legacy.trainable_variables
    import fe_tf._keras as chosen
    print(json.dumps({"package": chosen.KERAS_PACKAGE, "keras2": chosen.KERAS2,
                      "tf_keras_is_fe_keras": tf.keras.Model is chosen.keras.Model,
                      "optimizers": [type(m.current_optimizer).__module__ for m in (current, legacy)],
                      "trained": all(not np.allclose(b, w.numpy()) for b, w in zip(before, after))}))
""")


@pytest.fixture(scope="module")
def outcomes() -> Dict[str, subprocess.CompletedProcess]:
    """Every import order's script, run in its own fresh interpreter, all at once."""
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
               FE_HISTORY_DB="off", OMP_NUM_THREADS="1")
    running = {name: subprocess.Popen([sys.executable, "-c", imports + "\n" + BODY], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, imports in IMPORT_ORDERS.items()}
    done = {}
    try:
        for name, process in running.items():
            stdout, stderr = process.communicate(timeout=300)
            done[name] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return done


@pytest.mark.parametrize("order", list(IMPORT_ORDERS))
def test_fe_follows_the_keras_tensorflow_resolved_and_trains_its_models_whatever_the_import_order(
        outcomes: Dict[str, subprocess.CompletedProcess], order: str) -> None:
    result = outcomes[order]
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["package"] == "tf_keras" and report["keras2"] and report["tf_keras_is_fe_keras"]
    assert [module.split(".")[0] for module in report["optimizers"]] == ["tf_keras", "tf_keras"]
    assert report["trained"]
