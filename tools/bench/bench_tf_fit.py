#!/usr/bin/env python3
"""Whole training runs on TensorFlow, the way a user feels them: fe's `fit` vs a hand-written `tf.function` loop vs
`keras.Model.fit`, each timed from the start of training to its end (tracing, warmup and the first epoch included).

Run with an environment that has fe-core and fe-tf (from the repository root):

    .venvs/tf/bin/python tools/bench/bench_tf_fit.py [--repeats 5] [--epochs 3] [--models mlp lenet] [--quick]

bench_tf.py counts steady-state epochs only; this benchmark counts everything a short run costs. Workloads (synthetic
data, the same initial weights for every side):

  mlp:   Dense(32, relu) - Dense(10) logits on 64 features, batch 32, Adam(1e-3), 256 steps per epoch;
  lenet: fe_tf's LeNet on 28x28x1 images (softmax output), batch 32, Adam(1e-3), 64 steps per epoch.

Each side gets a fresh model (same weights) and optimizer, built before its clock starts; the clock covers:
  hand-written loop: defining the `@tf.function` train step (GradientTape, model call, Keras sparse categorical cross
      entropy averaged over the batch, `apply_gradients`) and running the epochs over numpy batches of a per-epoch
      permutation, its first-call trace included;
  keras fit: `compile` and `fit(x, y, batch_size=32, shuffle=True, verbose=0)`;
  fe: creating the Pipeline (NumpyDataset), the Network (ModelOp -> CrossEntropy -> UpdateOp) and the Estimator
      (default `log_steps=100`, its lines printed into a buffer), and `fit()` with fe's warmup, run history recorded
      (into a temporary database unless FE_HISTORY_DB is set).

All three run in one process, one round after another; the order of the sides rotates from round to round so that none
profits more often from the warm caches of the others (TensorFlow's first kernels, Python imports). Reported: the
median run time of each side and the median over rounds of (hand-written time / side time): above 1 the side is
faster than the hand-written loop. Single-threaded (OMP_NUM_THREADS=1, TensorFlow intra- and inter-op threads 1).
"""
from __future__ import annotations

import os
import tempfile

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
_HISTORY_DIR = None
if "FE_HISTORY_DB" not in os.environ:  # record the runs as a user's would be, without touching the user's history
    _HISTORY_DIR = tempfile.TemporaryDirectory(prefix="fe_bench_history_")
    os.environ["FE_HISTORY_DB"] = os.path.join(_HISTORY_DIR.name, "history.db")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

import keras  # noqa: E402

from fe_core.build import build  # noqa: E402
from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.estimator import Estimator  # noqa: E402
from fe_core.network import make_network  # noqa: E402
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402
from fe_tf.architecture import LeNet  # noqa: E402

from bench_table import machine_line, print_table  # noqa: E402
from tf_workloads import hand_written_step, make_data, mlp, model_with  # noqa: E402

BATCH = 32
SIDES = ("hand-written tf.function loop", "keras fit", "fe fit")


WORKLOADS: Dict[str, Dict[str, Any]] = {
    "mlp": {"model": mlp, "shape": (64,), "steps": 256, "from_logits": True},
    "lenet": {"model": LeNet, "shape": (28, 28, 1), "steps": 64, "from_logits": False},
}


def hand_written_run(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray],
                     epochs: int) -> float:
    """Seconds for the hand-written loop's whole run (its trace included)."""
    model = model_with(workload, weights)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    start = time.perf_counter()
    train_step = hand_written_step(model, optimizer, bool(workload["from_logits"]))

    size = len(x)
    for _ in range(epochs):
        order = np.random.permutation(size)
        for begin in range(0, size, BATCH):
            index = order[begin:begin + BATCH]
            train_step(x[index], y[index])
    return time.perf_counter() - start


def keras_run(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray], epochs: int) -> float:
    """Seconds for `compile` + `fit`."""
    model = model_with(workload, weights)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    start = time.perf_counter()
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=bool(workload["from_logits"])))
    model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=True, verbose=0)
    return time.perf_counter() - start


def fe_run(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray], epochs: int) -> float:
    """Seconds for making the Pipeline, Network and Estimator and running `fit` (warmup and tracing included)."""
    model = build(model_fn=lambda: model_with(workload, weights),
                  optimizer_fn=lambda: keras.optimizers.Adam(learning_rate=1e-3))
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # log lines are produced (and cost their time), not shown
        pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=BATCH)
        network = make_network(ops=[
            ModelOp(model=model, inputs="x", outputs="y_pred"),
            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=bool(workload["from_logits"])),
            UpdateOp(model=model, loss_name="ce"),
        ])
        Estimator(pipeline=pipeline, network=network, epochs=epochs).fit()
    return time.perf_counter() - start


RUNS: Dict[str, Callable[..., float]] = {SIDES[0]: hand_written_run, SIDES[1]: keras_run, SIDES[2]: fe_run}


def measure(workload: Dict[str, Any], repeats: int, epochs: int, steps: int) -> Dict[str, List[float]]:
    """Run-time lists per side, from `repeats` rounds with the order of the sides rotating."""
    x, y = make_data(workload["shape"], steps * BATCH)
    keras.utils.set_random_seed(0)
    weights = workload["model"]().get_weights()
    times: Dict[str, List[float]] = {side: [] for side in SIDES}
    for round_index in range(repeats):
        shift = round_index % len(SIDES)
        for side in SIDES[shift:] + SIDES[:shift]:
            times[side].append(RUNS[side](workload, x, y, weights, epochs))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=6, help="rounds (each runs every side once)")
    parser.add_argument("--epochs", type=int, default=3, help="epochs per run")
    parser.add_argument("--steps", type=int, default=None, help="steps per epoch (default: the workload's)")
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet"], choices=sorted(WORKLOADS))
    parser.add_argument("--quick", action="store_true", help="a smoke test: 2 rounds of 2 epochs of 16 steps")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.epochs, args.steps = 2, 2, 16
    print(machine_line(tensorflow=tf.__version__, keras=keras.__version__))
    print(f"whole runs (start of training to its end: tracing, warmup, every epoch); batch {BATCH}, Adam, CPU, "
          f"1 thread; {args.repeats} rounds, sides in rotating order")
    rows = []
    for name in args.models:
        workload = WORKLOADS[name]
        steps = args.steps or workload["steps"]
        times = measure(workload, args.repeats, args.epochs, steps)
        reference = times[SIDES[0]]
        for side in SIDES:
            speedups = [ref / own for ref, own in zip(reference, times[side])]
            rows.append([name, f"{side}, {args.epochs} x {steps} steps", f"{statistics.median(times[side]):.3f} s",
                         f"{min(times[side]):.3f} s", f"{statistics.median(speedups):.3f}x",
                         f"{min(reference) / min(times[side]):.3f}x"])
        fe_vs_keras = statistics.median(keras_time / fe_time
                                        for keras_time, fe_time in zip(times[SIDES[1]], times[SIDES[2]]))
        rows.append([name, "fe fit vs keras fit", "", "", f"{fe_vs_keras:.3f}x", ""])
    print_table(rows, ("workload", "side", "run time (median)", "run time (best)", "speed vs hand-written (median)",
                       "best vs best"))


if __name__ == "__main__":
    main()
