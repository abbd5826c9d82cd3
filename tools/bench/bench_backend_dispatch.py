#!/usr/bin/env python3
"""What calling a tensor function through `fe.backend` costs over calling the framework directly, in one process.

Run with an environment that has fe-core and fe-torch and/or fe-tf (from the repository root):

    .venvs/fe/bin/python tools/bench/bench_backend_dispatch.py [--quick] [--frameworks torch tf]

For each pair (fe.backend function, the framework's own call computing the same thing) on a small tensor (4x4
float32, on the CPU, eager), both are timed in alternating rounds; a round is `--calls` back-to-back calls, and each
side's per-call time is its best round (the least disturbed by the machine). The table shows both times in
microseconds, the difference (fe's dispatch overhead: the type lookup, argument normalisation and one extra Python
call) and the ratio. Single-threaded (OMP_NUM_THREADS=1).

Pairs: reduce_mean (all axes, and axis=1), reduce_sum(axis=[0, 1]), maximum, clip_by_value, abs, exp, where,
matmul, sparse_categorical_crossentropy (logits), mean_squared_error.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable, List, Tuple  # noqa: E402

import fe_core.backend as fb  # noqa: E402

Pair = Tuple[str, Callable[[], Any], Callable[[], Any]]


def torch_pairs() -> List[Pair]:
    import torch  # pylint: disable=import-outside-toplevel
    import torch.nn.functional as F  # pylint: disable=import-outside-toplevel
    torch.set_num_threads(1)
    x = torch.rand(4, 4)
    y = torch.rand(4, 4)
    labels = torch.tensor([0, 1, 2, 3])
    condition = x > 0.5
    return [
        ("reduce_mean(x)", lambda: fb.reduce_mean(x), lambda: torch.mean(x)),
        ("reduce_mean(x, axis=1)", lambda: fb.reduce_mean(x, axis=1), lambda: torch.mean(x, dim=1)),
        ("reduce_sum(x, axis=[0, 1])", lambda: fb.reduce_sum(x, axis=[0, 1]), lambda: torch.sum(x, dim=(0, 1))),
        ("maximum(x, y)", lambda: fb.maximum(x, y), lambda: torch.maximum(x, y)),
        ("clip_by_value(x, 0.2, 0.8)", lambda: fb.clip_by_value(x, 0.2, 0.8), lambda: torch.clamp(x, 0.2, 0.8)),
        ("abs(x)", lambda: fb.abs(x), lambda: torch.abs(x)),
        ("exp(x)", lambda: fb.exp(x), lambda: torch.exp(x)),
        ("where(c, x, y)", lambda: fb.where(condition, x, y), lambda: torch.where(condition, x, y)),
        ("matmul(x, y)", lambda: fb.matmul(x, y), lambda: torch.matmul(x, y)),
        ("sparse_categorical_crossentropy", lambda: fb.sparse_categorical_crossentropy(x, labels, from_logits=True),
         lambda: F.cross_entropy(x, labels)),
        ("mean_squared_error", lambda: fb.mean_squared_error(y, x),
         lambda: F.mse_loss(x, y, reduction="none").mean(-1)),
    ]


def tf_pairs() -> List[Pair]:
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    x = tf.random.uniform((4, 4))
    y = tf.random.uniform((4, 4))
    labels = tf.constant([0, 1, 2, 3])
    condition = x > 0.5
    return [
        ("reduce_mean(x)", lambda: fb.reduce_mean(x), lambda: tf.reduce_mean(x)),
        ("reduce_mean(x, axis=1)", lambda: fb.reduce_mean(x, axis=1), lambda: tf.reduce_mean(x, axis=1)),
        ("reduce_sum(x, axis=[0, 1])", lambda: fb.reduce_sum(x, axis=[0, 1]), lambda: tf.reduce_sum(x, axis=[0, 1])),
        ("maximum(x, y)", lambda: fb.maximum(x, y), lambda: tf.maximum(x, y)),
        ("clip_by_value(x, 0.2, 0.8)", lambda: fb.clip_by_value(x, 0.2, 0.8),
         lambda: tf.clip_by_value(x, 0.2, 0.8)),
        ("abs(x)", lambda: fb.abs(x), lambda: tf.abs(x)),
        ("exp(x)", lambda: fb.exp(x), lambda: tf.exp(x)),
        ("where(c, x, y)", lambda: fb.where(condition, x, y), lambda: tf.where(condition, x, y)),
        ("matmul(x, y)", lambda: fb.matmul(x, y), lambda: tf.linalg.matmul(x, y)),
        ("sparse_categorical_crossentropy", lambda: fb.sparse_categorical_crossentropy(x, labels, from_logits=True),
         lambda: tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x))),
        ("mean_squared_error", lambda: fb.mean_squared_error(y, x),
         lambda: tf.reduce_mean(tf.math.squared_difference(x, y), axis=-1)),
    ]


def per_call_us(function: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e6


def measure(pair: Pair, calls: int, rounds: int) -> Tuple[float, float]:
    _, fe_call, raw_call = pair
    for _ in range(max(calls // 10, 10)):  # warm up both (first-call dispatch resolution, caches)
        fe_call()
        raw_call()
    fe_best, raw_best = float("inf"), float("inf")
    for index in range(rounds):  # alternate which side goes first, so neither always gets the warmer machine
        order = ((fe_call, True), (raw_call, False)) if index % 2 == 0 else ((raw_call, False), (fe_call, True))
        for function, is_fe in order:
            elapsed = per_call_us(function, calls)
            if is_fe:
                fe_best = min(fe_best, elapsed)
            else:
                raw_best = min(raw_best, elapsed)
    return fe_best, raw_best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", nargs="+", default=["torch", "tf"], choices=["torch", "tf"])
    parser.add_argument("--calls", type=int, default=200, help="calls per timed round")
    parser.add_argument("--rounds", type=int, default=60, help="timed rounds per side")
    parser.add_argument("--quick", action="store_true", help="a few small rounds (a smoke test of the script)")
    args = parser.parse_args()
    calls, rounds = (20, 3) if args.quick else (args.calls, args.rounds)
    builders = {"torch": ("torch", torch_pairs), "tf": ("tensorflow", tf_pairs)}
    print(f"fe.backend dispatch overhead: best of {rounds} rounds x {calls} calls, 4x4 float32 on the CPU, eager")
    print(f"{'framework':<9} {'call':<34} {'fe us':>8} {'raw us':>8} {'diff us':>8} {'ratio':>6}")
    for framework in args.frameworks:
        module, build_pairs = builders[framework]
        if importlib.util.find_spec(module) is None:
            print(f"{framework:<9} (not installed in this environment: skipped)")
            continue
        for pair in build_pairs():
            fe_us, raw_us = measure(pair, calls, rounds)
            print(f"{framework:<9} {pair[0]:<34} {fe_us:>8.2f} {raw_us:>8.2f} {fe_us - raw_us:>8.2f} "
                  f"{fe_us / raw_us:>6.2f}")


if __name__ == "__main__":
    main()
