#!/usr/bin/env python3
"""How fast the Pipeline turns MNIST-shaped data into batches, next to hand-written vectorised numpy.

Run from the repository root (no install needed):

    python tools/bench/bench_pipeline.py [--samples 60000] [--batch-sizes 32 256] [--repeats 3]

Measured in one process, single-threaded (OMP_NUM_THREADS=1), on 28x28 uint8 images plus int labels, each row is one
shuffled training epoch producing float32 (n, 28, 28, 1) images scaled per sample to [0, 1]:

  (a) Pipeline, per-sample ops: custom NumpyOps (not batch-capable) doing ExpandDims + Minmax on every sample;
  (b) Pipeline, batch-capable ops: the built-in ExpandDims + Minmax, which the Pipeline runs once per batch;
  (c) numpy floor: permutation, fancy indexing, and the same per-sample min/max scaling written by hand.

The table has the median and best of `--repeats` epochs (one epoch for the slow per-sample row) and their ratios to
(c), in the format of the other benchmarks. The target is (b) >= 0.25x (c).

`--workers` also times producing the same batches with 2 threads and 2 forked processes (this is why the Pipeline
has no worker mode: on a 2-core machine neither beat the single-threaded loop).
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from typing import Any, Callable, Dict, List, Optional  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "fe-core" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.op.numpyop import NumpyOp  # noqa: E402
from fe_core.op.numpyop.univariate import ExpandDims, Minmax  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402

from bench_table import machine_line, print_table, summarize  # noqa: E402

EPSILON = 1e-7


class PerSampleExpandDims(NumpyOp):
    """ExpandDims written the FastEstimator way: one sample at a time, not batch-capable."""

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return np.expand_dims(data, -1)


class PerSampleMinmax(NumpyOp):
    """Minmax written the FastEstimator way: one sample at a time, not batch-capable."""

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        low, high = data.min(), data.max()
        return ((data - low) / max(high - low, EPSILON)).astype(np.float32)


def numpy_floor_epoch(x: np.ndarray, y: np.ndarray, batch_size: int) -> int:
    """One shuffled epoch by hand: the fastest reasonable vectorised numpy. Returns the samples produced."""
    size = len(x)
    order = np.random.permutation(size)
    produced = 0
    for start in range(0, size, batch_size):
        indices = order[start:start + batch_size]
        images = x[indices][..., None]
        labels = y[indices]
        count = len(indices)
        flat = images.reshape(count, -1)
        low = flat.min(axis=1).astype(np.float32).reshape(count, 1, 1, 1)
        scale = np.maximum(flat.max(axis=1).astype(np.float32).reshape(count, 1, 1, 1) - low, np.float32(EPSILON))
        out = images.astype(np.float32)
        out -= low
        out /= scale
        produced += len(out) + 0 * len(labels)
    return produced


def pipeline_epoch(pipeline: Pipeline) -> int:
    produced = 0
    with pipeline(mode="train", epoch=1) as loader:
        for batch in loader:
            produced += len(batch["x"])
    return produced


def rates(run: Callable[[], int], repeats: int) -> List[float]:
    """Samples/s of each of `repeats` runs."""
    measured = []
    for _ in range(repeats):
        start = time.perf_counter()
        produced = run()
        measured.append(produced / (time.perf_counter() - start))
    return measured


def check_same_results(per_sample: Pipeline, batched: Pipeline) -> None:
    np.random.seed(0)
    a = per_sample.get_results(mode="train", num_steps=3, shuffle=True)
    np.random.seed(0)
    b = batched.get_results(mode="train", num_steps=3, shuffle=True)
    for first, second in zip(a, b):
        np.testing.assert_allclose(first["x"], second["x"], rtol=1e-6)
        np.testing.assert_array_equal(first["y"], second["y"])


_WORKER_DATASET: Optional[NumpyDataset] = None
_WORKER_OPS: List[NumpyOp] = []


def _worker_per_sample_batch(indices: np.ndarray) -> Dict[str, np.ndarray]:
    """One batch the per-sample way (what a worker would do): fetch, run the ops per sample, stack."""
    samples = []
    for index in indices.tolist():
        sample = _WORKER_DATASET[index]
        for op in _WORKER_OPS:
            sample["x"] = op.forward(sample["x"], {})
        samples.append(sample)
    return {"x": np.stack([sample["x"] for sample in samples]), "y": np.stack([sample["y"] for sample in samples])}


def _worker_whole_batch(indices: np.ndarray) -> Dict[str, np.ndarray]:
    """One batch the batch-capable way: fancy-index, then the ops on the whole batch."""
    batch = _WORKER_DATASET.get_batch(indices)
    for op in _WORKER_OPS:
        batch["x"] = op.forward_batch([batch["x"]], {})[0]
    return batch


def compare_workers(dataset: NumpyDataset, batch_sizes: List[int]) -> None:
    """Samples/s producing one epoch of batches in this thread, with 2 threads, and with 2 forked processes."""
    global _WORKER_DATASET, _WORKER_OPS  # pylint: disable=global-statement
    _WORKER_DATASET = dataset
    print("\nworkers (same batches, one epoch each):")
    for name, function, ops in (
            ("per-sample ops", _worker_per_sample_batch, [PerSampleExpandDims("x", "x"), PerSampleMinmax("x", "x")]),
            ("batch-capable ops", _worker_whole_batch, [ExpandDims("x", "x"), Minmax("x", "x")])):
        _WORKER_OPS = ops
        for batch_size in batch_sizes:
            order = np.random.permutation(len(dataset))
            chunks = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
            rates = []
            start = time.perf_counter()
            rates.append(sum(len(function(chunk)["x"]) for chunk in chunks) / (time.perf_counter() - start))
            with ThreadPoolExecutor(2) as pool:
                start = time.perf_counter()
                produced = sum(len(batch["x"]) for batch in pool.map(function, chunks))
                rates.append(produced / (time.perf_counter() - start))
            with multiprocessing.get_context("fork").Pool(2) as pool:
                start = time.perf_counter()
                produced = sum(len(batch["x"]) for batch in pool.imap(function, chunks, chunksize=4))
                rates.append(produced / (time.perf_counter() - start))
            print(f"  {name:17s} batch {batch_size:4d}: single {rates[0]:>10,.0f}  2 threads {rates[1]:>10,.0f}  "
                  f"2 processes {rates[2]:>10,.0f} samples/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=60000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", action="store_true", help="also compare 2 threads and 2 processes")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(args.samples, 28, 28), dtype=np.uint8)
    y = rng.integers(0, 10, size=args.samples).astype(np.int64)
    dataset = NumpyDataset({"x": x, "y": y})
    print(machine_line())
    print(f"Pipeline vs vectorised numpy: {args.samples} samples of 28x28 uint8 -> float32 (n, 28, 28, 1) in [0, 1], "
          f"one shuffled epoch per run, {args.repeats} runs (1 for per-sample ops)")
    rows: List[List[str]] = []
    for batch_size in args.batch_sizes:
        per_sample = Pipeline(train_data=dataset, batch_size=batch_size,
                              ops=[PerSampleExpandDims(inputs="x", outputs="x"),
                                   PerSampleMinmax(inputs="x", outputs="x")])
        batched = Pipeline(train_data=dataset, batch_size=batch_size,
                           ops=[ExpandDims(inputs="x", outputs="x"), Minmax(inputs="x", outputs="x")])
        check_same_results(per_sample, batched)
        configurations = {"(c) numpy floor": [], "(b) Pipeline, batch-capable ops": []}
        for _ in range(args.repeats):  # alternate, so that drifts in machine speed hit both
            configurations["(c) numpy floor"] += rates(lambda: numpy_floor_epoch(x, y, batch_size), 1)
            configurations["(b) Pipeline, batch-capable ops"] += rates(lambda: pipeline_epoch(batched), 1)
        configurations["(a) Pipeline, per-sample ops"] = rates(lambda: pipeline_epoch(per_sample), 1)
        rows += summarize(f"batch {batch_size}", configurations, "(c) numpy floor", unit="samples/s")
    print_table(rows)
    if args.workers:
        compare_workers(dataset, args.batch_sizes)


if __name__ == "__main__":
    main()
