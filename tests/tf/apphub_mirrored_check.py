"""Run by test_apphub_patterns.py in its own interpreter (logical devices must be set before TensorFlow starts): a
Sequential without an Input layer, built with `fe.build(optimizer_fn="adam")`, trains under a MirroredStrategy on two
logical CPUs; its weights and optimizer state are mirrored variables. Prints `ALL OK` at the end."""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CPU = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(CPU, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402

from fe_core.build import build  # noqa: E402
from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.estimator import Estimator  # noqa: E402
from fe_core.network import make_network  # noqa: E402
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
tf.distribute.experimental_set_strategy(strategy)
model = build(lambda: keras.Sequential([keras.layers.Embedding(20, 4), keras.layers.GlobalAveragePooling1D(),
                                        keras.layers.Dense(1, activation="sigmoid")]), "adam")
assert not model.built
rng = np.random.default_rng(0)
data = NumpyDataset({"x": rng.integers(0, 20, (16, 6)), "y": rng.integers(0, 2, (16, 1)).astype(np.float32)})
network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                        CrossEntropy(inputs=("y_pred", "y"), outputs="ce"), UpdateOp(model=model, loss_name="ce")])
Estimator(Pipeline(train_data=data, batch_size=4), network, epochs=1, log_steps=None).fit()
assert model.built and int(model.optimizer.iterations.numpy()) == 4, model.optimizer.iterations
mirrored = [variable for variable in model.optimizer.variables
            if "Mirrored" in type(getattr(variable, "value", variable)).__name__]
assert mirrored, [type(getattr(v, "value", v)).__name__ for v in model.optimizer.variables]
print("ALL OK", flush=True)
