#!/usr/bin/env python3
"""What recording a run in the history database costs: `fit` with recording on vs off, in one process.

Each pair runs one short `fit` (a small torch model) with the history recorder and one without, in alternating order,
and the table shows the median ratio of their wall times (on / off, 1.00 = free) and the median extra milliseconds per
fit. The database is a temporary file; nothing is written to ~/fastestimator_data.

    OMP_NUM_THREADS=1 python tools/bench/bench_history.py            # 20 pairs of 50-step fits
    OMP_NUM_THREADS=1 python tools/bench/bench_history.py --quick    # 6 pairs of 10-step fits
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from typing import List, Tuple

import numpy as np


def make_estimator(steps: int):
    import torch  # pylint: disable=import-outside-toplevel

    from fe_core.build import build  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel

    x = np.random.default_rng(0).normal(size=(steps * 32, 8)).astype(np.float32)
    model = build(model_fn=lambda: torch.nn.Linear(8, 1), optimizer_fn="sgd")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": x[:, :1]}), batch_size=32)
    return Estimator(pipeline=pipeline, network=network, epochs=1, log_steps=10)


def timed_fit(steps: int, record: bool, db_path: str) -> float:
    from fe_core.estimator import record_history  # pylint: disable=import-outside-toplevel
    record_history(db_path if record else False)
    estimator = make_estimator(steps)
    with contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        estimator.fit(warmup=False)
        return time.perf_counter() - start


def measure(pairs: int, steps: int) -> List[Tuple[float, float]]:
    with tempfile.TemporaryDirectory() as directory:
        db_path = os.path.join(directory, "history.db")
        timed_fit(steps, True, db_path)  # warm up both paths (imports, the database schema)
        timed_fit(steps, False, db_path)
        results = []
        for index in range(pairs):
            if index % 2 == 0:
                on = timed_fit(steps, True, db_path)
                off = timed_fit(steps, False, db_path)
            else:
                off = timed_fit(steps, False, db_path)
                on = timed_fit(steps, True, db_path)
            results.append((on, off))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few, short fits (a smoke run)")
    parser.add_argument("--pairs", type=int, default=None, help="pairs of fits (even; default 20, quick 6)")
    parser.add_argument("--steps", type=int, default=None, help="training steps per fit (default 50, quick 10)")
    args = parser.parse_args()
    pairs = args.pairs or (6 if args.quick else 20)
    steps = args.steps or (10 if args.quick else 50)
    results = measure(pairs + pairs % 2, steps)
    ratio = statistics.median(on / off for on, off in results)
    extra_ms = statistics.median((on - off) * 1000 for on, off in results)
    off_ms = statistics.median(off * 1000 for _, off in results)
    print(f"{'case':<34} {'fit off (ms)':>12} {'on/off':>8} {'extra ms/fit':>13}")
    print(f"{f'torch Linear, {steps} steps, 1 epoch':<34} {off_ms:>12.1f} {ratio:>8.3f} {extra_ms:>13.2f}")


if __name__ == "__main__":
    main()
