"""Run by test_tf_distribute.py in its own interpreter: TFNetwork under a MirroredStrategy on two logical CPUs.

Logical devices must be configured before TensorFlow initializes, so this cannot run inside the main test process.
Every check prints `CHECK <name> ok`; the script ends with `ALL OK` or exits non-zero on the first failure.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CPU = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(CPU, [tf.config.LogicalDeviceConfiguration()] * 2)

if os.environ.get("TF_USE_LEGACY_KERAS", "").strip().lower() in ("1", "true"):  # the tf-keras2 suite: tf.keras
    import tf_keras as keras  # noqa: E402
else:
    import keras  # noqa: E402

from fe_core.build import build  # noqa: E402
from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.estimator import Estimator  # noqa: E402
from fe_core.network import make_network  # noqa: E402
from fe_core.op.tensorop import CrossEntropy, MeanSquaredError, ModelOp, UpdateOp  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402
from fe_core.trace import Trace  # noqa: E402

LR = 0.1


def check(name: str, condition: bool, detail: str = "") -> None:
    if not condition:
        print(f"CHECK {name} FAILED {detail}", flush=True)
        sys.exit(1)
    print(f"CHECK {name} ok", flush=True)


def linear_model() -> keras.Model:
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


def regression_network(model: keras.Model, merge_grad: int = 1):
    return make_network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                             MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                             UpdateOp(model=model, loss_name="mse", merge_grad=merge_grad)])


def mse_gradients(kernel: np.ndarray, bias: np.ndarray, batch: dict) -> tuple:
    x, y = batch["x"].astype(np.float64), batch["y"].astype(np.float64)
    d_prediction = 2.0 * (x @ kernel + bias - y) / y.size
    return x.T @ d_prediction, d_prediction.sum(axis=0)


def values(model: keras.Model) -> list:
    return [np.array(variable.numpy(), dtype=np.float64) for variable in model.trainable_variables]


def batches(count: int, size: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [{"x": rng.normal(size=(size, 4)).astype(np.float32), "y": rng.normal(size=(size, 3)).astype(np.float32)}
            for _ in range(count)]


class StrategyHolder(Trace):
    """A trace whose state includes the strategy object (stored through the backend's reducer)."""

    def __init__(self) -> None:
        super().__init__(mode="train")
        self.strategy = tf.distribute.get_strategy()
        self.batches = 0

    def on_batch_end(self, data) -> None:
        self.batches += 1


def main() -> None:
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    tf.distribute.experimental_set_strategy(strategy)
    check("two replicas", strategy.num_replicas_in_sync == 2)
    keras.utils.set_random_seed(0)

    # exact SGD updates from the global-batch mean gradient, static and eager
    for eager in (False, True):
        model = build(model_fn=linear_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
        weight = model.weights[0]  # Keras 3 wraps the tf variable (`.value`); tf-keras' weight is the tf variable
        variable = weight if isinstance(weight, tf.Variable) else weight.value
        check(f"mirrored variables (eager={eager})", type(variable).__name__ == "MirroredVariable")
        network = regression_network(model)
        batch = batches(1, 8, seed=1)[0]
        kernel, bias = values(model)
        d_kernel, d_bias = mse_gradients(kernel, bias, batch)
        with network(mode="train", epoch=1, eager=eager):
            result = network.run_step(dict(batch))
        new_kernel, new_bias = values(model)
        check(f"update is -lr x global mean gradient (eager={eager})",
              np.allclose(new_kernel - kernel, -LR * d_kernel, rtol=1e-4, atol=1e-6)
              and np.allclose(new_bias - bias, -LR * d_bias, rtol=1e-4, atol=1e-6))
        reference = batch["x"].astype(np.float64) @ kernel + bias
        check(f"predictions merged in order (eager={eager})", np.allclose(result["y_pred"], reference, atol=1e-5))
        expected_loss = np.mean((reference - batch["y"]) ** 2)
        check(f"loss averaged over replicas (eager={eager})", np.isclose(float(result["mse"]), expected_loss,
                                                                           rtol=1e-4))

    # gradient accumulation with per-replica accumulators
    model = build(model_fn=linear_model, optimizer_fn=lambda: keras.optimizers.SGD(learning_rate=LR))
    network = regression_network(model, merge_grad=2)
    first, second = batches(2, 8, seed=2)
    kernel, bias = values(model)
    gradients = [mse_gradients(kernel, bias, first), mse_gradients(kernel, bias, second)]
    with network(mode="train", epoch=1):
        network.run_step(dict(first))
        check("merge_grad: no update on the first step", np.array_equal(values(model)[0], kernel))
        network.run_step(dict(second))
    new_kernel, new_bias = values(model)
    check("merge_grad: -lr x mean of both steps",
          np.allclose(new_kernel - kernel, -LR * (gradients[0][0] + gradients[1][0]) / 2, rtol=1e-4, atol=1e-6)
          and np.allclose(new_bias - bias, -LR * (gradients[0][1] + gradients[1][1]) / 2, rtol=1e-4, atol=1e-6))

    # batches smaller than the replica count, and uneven splits
    kernel, bias = values(model)
    for size in (1, 7):
        x = np.random.default_rng(size).normal(size=(size, 4)).astype(np.float32)
        prediction = network.transform({"x": x, "y": np.zeros((size, 3), np.float32)}, mode="eval")
        check(f"transform of a batch of {size}", prediction["y_pred"].shape == (size, 3) and np.allclose(
            prediction["y_pred"], x @ kernel + bias, atol=1e-5) and np.isfinite(prediction["mse"]))
        # 7 samples: chunks of 4 and 3, whose means weigh by their samples (the whole batch's loss, as one device)
        whole = np.mean((x.astype(np.float64) @ kernel + bias) ** 2)
        check(f"the loss of a batch of {size} is the whole batch's", np.isclose(float(prediction["mse"]), whole,
                                                                                 rtol=1e-5), f"{prediction['mse']}")

    # training with the Estimator, then a checkpoint round trip that resumes exactly
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 96)
    features = rng.normal(size=(96, 4)).astype(np.float32)
    features[np.arange(96), labels] += 3.0
    pipeline = Pipeline(train_data=NumpyDataset({"x": features, "y": labels}),
                        eval_data=NumpyDataset({"x": features[:30], "y": labels[:30]}), batch_size=16)
    classifier = build(model_fn=lambda: keras.Sequential([keras.Input((4,)), keras.layers.Dense(3,
                                                                                                activation="softmax")]),
                       optimizer_fn="adam", model_name="classifier")
    network = make_network(ops=[ModelOp(model=classifier, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                UpdateOp(model=classifier, loss_name="ce")])
    holder = StrategyHolder()
    estimator = Estimator(pipeline=pipeline, network=network, epochs=1, traces=holder, log_steps=None)
    before = values(classifier)
    estimator.fit()
    check("estimator trained", not np.allclose(before[0], values(classifier)[0]) and holder.batches == 6)
    with tempfile.TemporaryDirectory() as directory:
        checkpoint = os.path.join(directory, "ckpt")
        estimator.system.save_state(checkpoint)
        with open(os.path.join(checkpoint, "state.json"), encoding="utf-8") as file:
            check("strategy stored through its reducer", "tf.MirroredStrategy" in file.read())
        at_save = values(classifier) + [np.array(v.numpy()) for v in classifier.optimizer.variables]
        estimator.system.total_epochs = 2
        traces = network.trace_count
        estimator._start({"train", "eval"}, eager=False)
        check("the second epoch adds no traces", network.trace_count == traces, f"{traces} -> {network.trace_count}")
        uninterrupted = values(classifier) + [np.array(v.numpy()) for v in classifier.optimizer.variables]
        holder.strategy = None
        estimator.system.load_state(checkpoint)
        restored = values(classifier) + [np.array(v.numpy()) for v in classifier.optimizer.variables]
        check("load_state restores weights and optimizer",
              all(np.array_equal(a, b) for a, b in zip(at_save, restored)))
        check("load_state restores the strategy as the active one", holder.strategy is strategy)
        check("load_state restores trace state", holder.batches == 6)
        estimator.system.total_epochs = 2
        estimator._start({"train", "eval"}, eager=False)
        resumed = values(classifier) + [np.array(v.numpy()) for v in classifier.optimizer.variables]
        check("resumed epoch equals the uninterrupted one",
              all(np.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(uninterrupted, resumed)),
              json.dumps([float(np.max(np.abs(a - b))) for a, b in zip(uninterrupted, resumed)]))
    print("ALL OK", flush=True)


if __name__ == "__main__":
    main()
