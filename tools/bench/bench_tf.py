#!/usr/bin/env python3
"""fe's `Estimator.fit` on TensorFlow next to a hand-written `tf.function` loop and to `keras.Model.fit`, in one process.

Run with an environment that has fe-core and fe-tf (from the repository root):

    .venvs/tf/bin/python tools/bench/bench_tf.py [--repeats 5] [--epochs 9] [--models mlp lenet] [--quick]

Workloads (synthetic data, same for every side; all start from the same initial weights):

  mlp:   Dense(32, relu) - Dense(10) logits on 64 features, batch 32, Adam(1e-3), 4096 samples (128 steps/epoch);
  lenet: fe_tf's LeNet on 28x28x1 images (softmax output), batch 32, Adam(1e-3), 512 samples (16 steps/epoch).

The hand-written loop is what a careful user writes: a `tf.function` train step (GradientTape, model call, Keras
sparse categorical cross entropy averaged over the batch, `tape.gradient`, `optimizer.apply_gradients`), fed with a
numpy permutation and fancy-indexed numpy batches. A second, tuned hand-written loop converts each batch with
`tf.constant` and calls the traced step's concrete function, as fe does (see README.md). `keras.Model.fit` gets the same numpy arrays (`shuffle=True`,
`verbose=0`; XLA is off, as Keras does on CPU-only machines). fe runs `Estimator.fit` with the data in a
`NumpyDataset`, a Network of ModelOp -> CrossEntropy -> UpdateOp, no eval data, `log_steps=None` or `log_steps=100`.

Only steady-state training counts. Each fe epoch (timed by a trace with epoch hooks only) and each Keras epoch (timed
by a Keras callback) is paired with one epoch of the hand-written loop run right after it, or right before it in every
other pair (see pairing.py: the second epoch of a back-to-back pair runs faster, whichever it is), so every pair sees
the same machine conditions and the position bias cancels; the first pair of every run (tracing, first-epoch
allocations) is left out. The
table shows the median and best epoch rates, the median of the per-pair ratios to the hand-written loop, and
best / best; the last lines compare fe with Keras through those ratios. Single-threaded (OMP_NUM_THREADS=1, TensorFlow
intra- and inter-op threads 1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List, Tuple  # noqa: E402

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

from bench_table import PAIRED_HEADER, machine_line, print_table, summarize_pairs  # noqa: E402
from pairing import EpochPairs, PairedEpochs, alternating_pairs  # noqa: E402
from tf_workloads import hand_written_step, make_data, mlp, model_with  # noqa: E402

BATCH = 32


WORKLOADS: Dict[str, Dict[str, Any]] = {
    "mlp": {"model": mlp, "shape": (64,), "samples": 4096, "from_logits": True},
    "lenet": {"model": LeNet, "shape": (28, 28, 1), "samples": 512, "from_logits": False},
}


class HandWrittenLoop:
    """The hand-written `tf.function` training loop, one epoch per call; returns that epoch's steps/sec."""

    def __init__(self, workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray]) -> None:
        self.x, self.y = x, y
        model = model_with(workload, weights)
        optimizer = keras.optimizers.Adam(learning_rate=1e-3)
        self.train_step = hand_written_step(model, optimizer, bool(workload["from_logits"]))

    def __call__(self) -> float:
        x, y, train_step = self.x, self.y, self.train_step
        size = len(x)
        start = time.perf_counter()
        order = np.random.permutation(size)
        steps = 0
        for begin in range(0, size, BATCH):
            index = order[begin:begin + BATCH]
            train_step(x[index], y[index])
            steps += 1
        return steps / (time.perf_counter() - start)


class TunedHandWrittenLoop(HandWrittenLoop):
    """The hand-written loop tuned the way fe runs its step: batches converted with `tf.constant` and the traced
    step called as a concrete function (skipping `tf.function`'s per-call argument dispatch)."""

    def __init__(self, workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray]) -> None:
        super().__init__(workload, x, y, weights)
        self.concrete = self.train_step.get_concrete_function(tf.TensorSpec([None, *x.shape[1:]], tf.float32),
                                                              tf.TensorSpec([None], tf.int64))

    def __call__(self) -> float:
        x, y, concrete = self.x, self.y, self.concrete
        size = len(x)
        start = time.perf_counter()
        order = np.random.permutation(size)
        steps = 0
        for begin in range(0, size, BATCH):
            index = order[begin:begin + BATCH]
            concrete(tf.constant(x[index]), tf.constant(y[index]))
            steps += 1
        return steps / (time.perf_counter() - start)


class KerasPairedEpochs(keras.callbacks.Callback):
    """Times each Keras epoch and pairs it with an epoch of the hand-written loop (see pairing.EpochPairs)."""

    def __init__(self, other_epoch: Callable[[], float], steps: int) -> None:
        super().__init__()
        self.timer = EpochPairs(other_epoch)
        self.steps = steps

    @property
    def pairs(self) -> List[Tuple[float, float]]:
        return self.timer.pairs

    def on_epoch_begin(self, epoch, logs=None):  # type: ignore[no-untyped-def]
        self.timer.begin()

    def on_epoch_end(self, epoch, logs=None):  # type: ignore[no-untyped-def]
        self.timer.end(self.steps)


def fe_pairs(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray], epochs: int,
             log_steps: Any) -> List[Tuple[float, float]]:
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), batch_size=BATCH)
    model = build(model_fn=lambda: model_with(workload, weights),
                  optimizer_fn=lambda: keras.optimizers.Adam(learning_rate=1e-3))
    network = make_network(ops=[
        ModelOp(model=model, inputs="x", outputs="y_pred"),
        CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=bool(workload["from_logits"])),
        UpdateOp(model=model, loss_name="ce"),
    ])
    timer = PairedEpochs(HandWrittenLoop(workload, x, y, weights))
    with contextlib.redirect_stdout(io.StringIO()):  # log lines are produced (and cost their time), not shown
        estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=[timer], log_steps=log_steps)
        estimator.fit()
    return timer.pairs[1:]


def keras_pairs(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray],
                epochs: int) -> List[Tuple[float, float]]:
    model = model_with(workload, weights)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=bool(workload["from_logits"])))
    timer = KerasPairedEpochs(HandWrittenLoop(workload, x, y, weights), steps=-(-len(x) // BATCH))
    model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=True, verbose=0, callbacks=[timer])
    return timer.pairs[1:]


def tuned_pairs(workload: Dict[str, Any], x: np.ndarray, y: np.ndarray, weights: List[np.ndarray],
                epochs: int) -> List[Tuple[float, float]]:
    tuned, plain = TunedHandWrittenLoop(workload, x, y, weights), HandWrittenLoop(workload, x, y, weights)
    return alternating_pairs(tuned, plain, epochs)[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="runs per configuration")
    parser.add_argument("--epochs", type=int, default=9,
                        help="epochs per run (the first pair is not counted; an odd number balances the pair order)")
    parser.add_argument("--models", nargs="+", default=["mlp", "lenet"], choices=sorted(WORKLOADS))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 1 run of 3 epochs per configuration on 256 samples per workload")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.epochs = 1, 3
    print(machine_line(tensorflow=tf.__version__, keras=keras.__version__))
    print(f"fe Estimator.fit and keras fit vs a hand-written tf.function loop; batch {BATCH}, Adam, CPU, 1 thread; "
          f"{args.repeats} runs x {args.epochs - 1} counted epoch pairs per configuration")
    rows = []
    versus_keras = []
    for name in args.models:
        workload = WORKLOADS[name]
        x, y = make_data(workload["shape"], 256 if args.quick else workload["samples"])
        keras.utils.set_random_seed(0)
        weights = workload["model"]().get_weights()
        configurations: Dict[str, List[Tuple[float, float]]] = {"hand-written, concrete function": [],
                                                                 "keras fit": [], "fe log_steps=None": [],
                                                                 "fe log_steps=100": []}
        for _ in range(args.repeats):
            configurations["hand-written, concrete function"] += tuned_pairs(workload, x, y, weights, args.epochs)
            configurations["keras fit"] += keras_pairs(workload, x, y, weights, args.epochs)
            configurations["fe log_steps=None"] += fe_pairs(workload, x, y, weights, args.epochs, None)
            configurations["fe log_steps=100"] += fe_pairs(workload, x, y, weights, args.epochs, 100)
        rows += summarize_pairs(name, configurations, "hand-written tf.function loop")
        keras_ratio = statistics.median(rate / ref for rate, ref in configurations["keras fit"])
        for config in ("fe log_steps=None", "fe log_steps=100"):
            fe_ratio = statistics.median(rate / ref for rate, ref in configurations[config])
            versus_keras.append(f"{name}: {config} / keras fit = {fe_ratio / keras_ratio:.3f}x")
    print_table(rows, PAIRED_HEADER)
    print("\n".join(versus_keras))


if __name__ == "__main__":
    main()
