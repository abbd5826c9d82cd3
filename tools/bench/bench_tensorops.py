#!/usr/bin/env python3
"""A MixUp + GradientOp training step in fe's Network next to the same step written by hand, in one process.

Run with an environment that has fe-core and fe-torch and/or fe-tf (from the repository root):

    .venvs/fe/bin/python tools/bench/bench_tensorops.py [--frameworks torch tf] [--rounds 21] [--steps 50] [--quick]

The step (batch 32 of 64 features, one-hot labels of 10 classes, an MLP 64-32-10 with logits, SGD):

  fe:   MixUpBatch(x, y) -> ModelOp -> CrossEntropy(from_logits) -> GradientOp(model) -> UpdateOp(gradients=...),
        run by `network.run_step` inside `with network(mode="train", epoch=1, desired_output_keys={"ce"})`
        (torch: eager TorchNetwork; tf: TFNetwork's traced step);
  hand: the same computation as a careful user writes it: per-sample Beta draws (torch.distributions.Beta; tf: two
        stateless gammas seeded from the global generator), the mix with the batch rolled by one, forward, soft-label
        cross entropy, gradients (torch.autograd.grad; tf.GradientTape), optimizer step; in tf one tf.function.

Both sides convert the same numpy batches to tensors every step. Each round times a block of `--steps` steps of
each side, fe first in even rounds and hand-written first in odd ones; the first round is warmup and left out. The
table shows steps/s of each side (median over rounds), the median of the per-round ratios fe / hand-written
(>= 1 means fe is as fast) with their range, and best / best (the least disturbed round of each side: on a busy
machine the steadiest figure). Single-threaded (OMP_NUM_THREADS=1).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Callable, Dict, List, Tuple  # noqa: E402

import numpy as np  # noqa: E402

BATCH, FEATURES, CLASSES, HIDDEN, LR, ALPHA = 32, 64, 10, 32, 0.01, 1.0


def _batches(count: int) -> List[Dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [{"x": rng.normal(size=(BATCH, FEATURES)).astype(np.float32),
             "y": np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]} for _ in range(count)]


def _fe_ops(model: object) -> list:
    from fe_core.op.tensorop import CrossEntropy, GradientOp, MixUpBatch, ModelOp, UpdateOp
    return [MixUpBatch(inputs=("x", "y"), outputs=("x", "y"), alpha=ALPHA),
            ModelOp(model=model, inputs="x", outputs="y_pred"),
            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
            GradientOp(finals="ce", model=model, outputs="grads"),
            UpdateOp(model=model, gradients="grads")]


def _fe_runner(model_fn: Callable[[], object], optimizer_fn: object) -> Tuple[Callable[[Dict], None], Callable]:
    from fe_core.build import build
    from fe_core.network import make_network
    model = build(model_fn=model_fn, optimizer_fn=optimizer_fn)
    network = make_network(ops=_fe_ops(model))
    context = network(mode="train", epoch=1, desired_output_keys={"ce"})
    context.__enter__()

    def step(batch: Dict[str, np.ndarray]) -> None:
        network.run_step(dict(batch))

    return step, lambda: context.__exit__(None, None, None)


# ------------------------------------------------------------------------------------------------------- torch
def torch_sides() -> Tuple[Callable, Callable, Callable]:
    import torch
    torch.set_num_threads(1)

    def mlp() -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))

    fe_step, close = _fe_runner(mlp, lambda params: torch.optim.SGD(params, lr=LR))
    model = mlp()
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=LR)
    concentration = torch.tensor(ALPHA)
    beta = torch.distributions.Beta(concentration, concentration, validate_args=False)

    def hand_step(batch: Dict[str, np.ndarray]) -> None:
        x, y = torch.from_numpy(batch["x"]), torch.from_numpy(batch["y"])
        lam = beta.sample((BATCH, ))
        x = lam[:, None] * x + (1 - lam[:, None]) * x.roll(1, 0)
        y = lam[:, None] * y + (1 - lam[:, None]) * y.roll(1, 0)
        loss = -(y * torch.log_softmax(model(x), dim=-1)).sum(dim=-1).mean()
        grads = torch.autograd.grad(loss, params)
        for param, grad in zip(params, grads):
            param.grad = grad
        optimizer.step()
        for param in params:
            param.grad = None

    return fe_step, hand_step, close


# ------------------------------------------------------------------------------------------------------- tf
def tf_sides() -> Tuple[Callable, Callable, Callable]:
    import keras
    import tensorflow as tf

    def mlp() -> keras.Model:
        return keras.Sequential([keras.Input((FEATURES, )), keras.layers.Dense(HIDDEN, activation="relu"),
                                 keras.layers.Dense(CLASSES)])

    fe_step, close = _fe_runner(mlp, lambda: keras.optimizers.SGD(learning_rate=LR))
    model = mlp()
    optimizer = keras.optimizers.SGD(learning_rate=LR)
    generator = tf.random.get_global_generator()

    @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32),
                                  tf.TensorSpec([None, CLASSES], tf.float32)])
    def train(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        seeds = generator.make_seeds(2)
        first = tf.random.stateless_gamma(tf.shape(x)[:1], seed=seeds[:, 0], alpha=ALPHA)
        second = tf.random.stateless_gamma(tf.shape(x)[:1], seed=seeds[:, 1], alpha=ALPHA)
        lam = (first / (first + second))[:, tf.newaxis]
        x = lam * x + (1 - lam) * tf.roll(x, 1, axis=0)
        y = lam * y + (1 - lam) * tf.roll(y, 1, axis=0)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.categorical_crossentropy(y, model(x, training=True), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    concrete = train.get_concrete_function()

    def hand_step(batch: Dict[str, np.ndarray]) -> None:
        concrete(tf.constant(batch["x"]), tf.constant(batch["y"]))

    return fe_step, hand_step, close


def _time(step: Callable, batches: List[Dict[str, np.ndarray]]) -> float:
    start = time.perf_counter()
    for batch in batches:
        step(batch)
    return time.perf_counter() - start


def run(framework: str, rounds: int, steps: int) -> List[str]:
    fe_step, hand_step, close = (torch_sides if framework == "torch" else tf_sides)()
    batches = _batches(steps)
    fe_rates, hand_rates, ratios = [], [], []
    try:
        for round_index in range(rounds + 1):
            order = [("fe", fe_step), ("hand", hand_step)]
            if round_index % 2:
                order.reverse()
            seconds = {name: _time(step, batches) for name, step in order}
            if round_index == 0:
                continue  # warmup: first traces, allocations
            fe_rates.append(steps / seconds["fe"])
            hand_rates.append(steps / seconds["hand"])
            ratios.append(seconds["hand"] / seconds["fe"])
    finally:
        close()
    return [framework, f"{statistics.median(fe_rates):.0f}", f"{statistics.median(hand_rates):.0f}",
            f"{statistics.median(ratios):.2f}", f"{min(ratios):.2f}-{max(ratios):.2f}",
            f"{max(fe_rates) / max(hand_rates):.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    available = [name for name, module in (("torch", "torch"), ("tf", "tensorflow"))
                 if importlib.util.find_spec(module) is not None]
    parser.add_argument("--frameworks", nargs="+", choices=["torch", "tf"], default=available)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 10 steps (a smoke run)")
    args = parser.parse_args()
    rounds, steps = (3, 10) if args.quick else (args.rounds, args.steps)
    header = ["framework", "fe steps/s", "hand steps/s", "ratio fe/hand (median)", "range", "ratio (best)"]
    rows = [run(framework, rounds, steps) for framework in args.frameworks]
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    print("MixUpBatch + GradientOp(model) + UpdateOp(gradients) step, fe Network vs hand-written "
          f"(batch {BATCH}, MLP {FEATURES}-{HIDDEN}-{CLASSES}, {rounds} rounds x {steps} steps)")
    for row in [header] + rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
