#!/usr/bin/env python3
"""`fe.backend.feed_forward` called eagerly once per batch (a trace scoring a model outside the training step, as
FastEstimator's siamese one-shot accuracy trace does) against calling the Keras model directly, in one process.

Run with an environment that has fe-core and fe-tf (from the repository root):

    .venvs/tf/bin/python tools/bench/bench_tf_feed_forward.py [--quick] [--calls 40] [--rounds 5]

Workload: a siamese pair model (two 32x32x1 images through one shared branch Conv2D(16)-MaxPool-Conv2D(16)-Flatten-
Dense(64), the absolute difference, Dense(1, sigmoid)) on batches of 20 pairs, `training=False`, on the CPU. Sides:
  (a) fe: `fe.backend.feed_forward(model, [x_a, x_b], training=False)` with numpy inputs;
  (b) eager Keras: `model([x_a, x_b], training=False)` (what feed_forward did before: an eager Keras 3 call runs every
      layer's Python code);
  (c) hand-written: one `tf.function(lambda x: model(x, training=False), reduce_retracing=True)`, made once.
Each round times `--calls` back-to-back calls per side, the sides in rotating order; reported: each side's best round
(ms per call) and the ratios (b)/(a) and (c)/(a): above 1, fe is faster. Single-threaded (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable, Dict, List  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

import keras  # noqa: E402

import fe_core.backend as fb  # noqa: E402
from fe_core.build import build  # noqa: E402


def pair_model() -> keras.Model:
    first, second = keras.Input((32, 32, 1)), keras.Input((32, 32, 1))
    branch = keras.Sequential([keras.layers.Conv2D(16, 3, activation="relu"), keras.layers.MaxPooling2D(),
                               keras.layers.Conv2D(16, 3, activation="relu"), keras.layers.Flatten(),
                               keras.layers.Dense(64, activation="relu")])
    distance = keras.layers.Lambda(lambda pair: tf.abs(pair[0] - pair[1]))([branch(first), branch(second)])
    return keras.Model([first, second], keras.layers.Dense(1, activation="sigmoid")(distance))


def per_call_ms(function: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40, help="calls per timed round and side")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds")
    parser.add_argument("--quick", action="store_true", help="a few calls (a smoke test of the script)")
    args = parser.parse_args()
    calls, rounds = (3, 2) if args.quick else (args.calls, args.rounds)
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}, tensorflow "
          f"{tf.__version__}, keras {keras.__version__}")
    model = build(pair_model, None)
    rng = np.random.default_rng(0)
    pair = [rng.random((20, 32, 32, 1), dtype=np.float32) for _ in range(2)]
    tensors = [tf.constant(value) for value in pair]
    traced = tf.function(lambda x: model(x, training=False), reduce_retracing=True)
    sides: Dict[str, Callable[[], Any]] = {
        "(a) fe.backend.feed_forward": lambda: fb.feed_forward(model, pair, training=False),
        "(b) model(x) eager": lambda: model(tensors, training=False),
        "(c) hand-written tf.function": lambda: traced(tensors),
    }
    reference = model(tensors, training=False).numpy()
    for function in sides.values():  # warm up: traces, first kernels; and the same prediction everywhere
        np.testing.assert_allclose(np.asarray(function()), reference, rtol=1e-4, atol=1e-5)
    best = {name: float("inf") for name in sides}
    names: List[str] = list(sides)
    for index in range(rounds):
        order = names[index % len(names):] + names[:index % len(names)]
        for name in order:
            best[name] = min(best[name], per_call_ms(sides[name], calls))
    print(f"siamese pair model, batches of 20 pairs, best of {rounds} rounds x {calls} calls, CPU, eager caller")
    print(f"{'side':<30} | {'ms/call':>8}")
    for name in names:
        print(f"{name:<30} | {best[name]:>8.2f}")
    fe_ms = best[names[0]]
    print(f"vs (b) eager Keras            | {best[names[1]] / fe_ms:.3f}x")
    print(f"vs (c) hand-written           | {best[names[2]] / fe_ms:.3f}x")


if __name__ == "__main__":
    main()
