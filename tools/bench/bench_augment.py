#!/usr/bin/env python3
"""How fast the Pipeline runs a typical CIFAR-10 augmentation chain, next to the same albumentations calls by hand.

Run from the repository root (no install needed; albumentations and OpenCV must be importable):

    python tools/bench/bench_augment.py [--samples 10000] [--batch-size 128] [--pairs 6] [--quick]

The chain is FastEstimator's CIFAR-10 example: PadIfNeeded(40, 40) + RandomCrop(32, 32) + Sometimes(HorizontalFlip)
+ CoarseDropout(max_holes=1) + Normalize, on 32x32x3 uint8 images, one shuffled training epoch per run, producing
float32 (n, 32, 32, 3) batches and int labels. Measured in one process, single-threaded (OMP_NUM_THREADS=1):

  (a) fe Pipeline: the fe ops above (randomness from numpy's global state, so runs repeat and resume exactly);
  (b) hand-written loop: shuffle, then per sample the same albumentations transforms called directly (PadIfNeeded,
      RandomCrop, HorizontalFlip half of the time, CoarseDropout, Normalize), then np.stack per batch: the target,
      (a) >= 0.9x (b);
  (c) hand-written loop, batch normalize: as (b), but Normalize done once per batch in numpy (what fe's batch-capable
      Normalize does), the fastest hand-written loop.

Epochs of (a) are paired with epochs of each reference, back to back in alternating order (tools/bench/pairing.py);
the table gives each row's median rate, best rate, and the median of its per-pair ratios with a 95% interval.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Dict, List  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "fe-core" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from fe_core.dataset import NumpyDataset  # noqa: E402
from fe_core.op.numpyop.meta import Sometimes  # noqa: E402
from fe_core.op.numpyop.multivariate import HorizontalFlip, PadIfNeeded, RandomCrop  # noqa: E402
from fe_core.op.numpyop.univariate import CoarseDropout, Normalize  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402

from bench_table import PAIRED_HEADER, machine_line, print_table, summarize_pairs  # noqa: E402
from pairing import alternating_pairs  # noqa: E402

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2471, 0.2435, 0.2616)


def fe_pipeline(x: np.ndarray, y: np.ndarray, batch_size: int) -> Pipeline:
    """FastEstimator's CIFAR-10 augmentation chain."""
    return Pipeline(train_data=NumpyDataset({"x": x, "y": y}),
                    batch_size=batch_size,
                    ops=[PadIfNeeded(min_height=40, min_width=40, image_in="x", image_out="x", mode="train"),
                         RandomCrop(32, 32, image_in="x", image_out="x", mode="train"),
                         Sometimes(HorizontalFlip(image_in="x", image_out="x", mode="train")),
                         CoarseDropout(inputs="x", outputs="x", mode="train", max_holes=1),
                         Normalize(inputs="x", outputs="x", mean=MEAN, std=STD)])


def fe_epoch(pipeline: Pipeline) -> int:
    produced = 0
    with pipeline(mode="train", epoch=1) as loader:
        for batch in loader:
            produced += len(batch["x"])
    return produced


class HandWritten:
    """The same albumentations transforms, called directly in a plain loop."""

    def __init__(self, batch_normalize: bool) -> None:
        import albumentations as A  # pylint: disable=import-outside-toplevel
        self.pad = A.PadIfNeeded(min_height=40, min_width=40, border_mode=4, p=1.0)
        self.crop = A.RandomCrop(32, 32, p=1.0)
        self.flip = A.HorizontalFlip(p=1.0)
        self.dropout = A.CoarseDropout(num_holes_range=(1, 1), hole_height_range=(8, 8), hole_width_range=(8, 8),
                                       fill=0, p=1.0)
        self.normalize = A.Normalize(mean=MEAN, std=STD, max_pixel_value=255.0, p=1.0)
        self.batch_normalize = batch_normalize
        self.offset = np.array(MEAN, dtype=np.float32) * np.float32(255.0)
        self.scale = np.float32(1.0) / (np.array(STD, dtype=np.float32) * np.float32(255.0))

    def epoch(self, x: np.ndarray, y: np.ndarray, batch_size: int) -> int:
        order = np.random.permutation(len(x))
        produced = 0
        for start in range(0, len(order), batch_size):
            indices = order[start:start + batch_size]
            images = []
            for image in x[indices]:
                image = self.pad(image=image)["image"]
                image = self.crop(image=image)["image"]
                if np.random.uniform() < 0.5:
                    image = self.flip(image=image)["image"]
                image = self.dropout(image=image)["image"]
                if not self.batch_normalize:
                    image = self.normalize(image=image)["image"]
                images.append(image)
            batch = np.stack(images)
            if self.batch_normalize:
                batch = (batch.astype(np.float32) - self.offset) * self.scale
            labels = y[indices]
            produced += len(batch) + 0 * len(labels)
        return produced


def rate_of(run: Callable[[], int]) -> Callable[[], float]:
    def timed() -> float:
        start = time.perf_counter()
        produced = run()
        return produced / (time.perf_counter() - start)
    return timed


def check_outputs(pipeline: Pipeline, hand: HandWritten, x: np.ndarray, y: np.ndarray) -> None:
    """Both sides produce float32 (n, 32, 32, 3) batches normalised to roughly zero mean."""
    batch = pipeline.get_results(mode="train", num_steps=1)
    batch = {key: np.asarray(value) for key, value in batch.items()}  # get_results hands out framework tensors
    assert batch["x"].dtype == np.float32 and batch["x"].shape[1:] == (32, 32, 3), batch["x"].shape
    assert abs(float(batch["x"].mean())) < 0.5
    assert hand.epoch(x[:64], y[:64], 32) == 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--pairs", type=int, default=6, help="epoch pairs per reference (even)")
    parser.add_argument("--quick", action="store_true", help="1024 samples, 2 pairs (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.pairs = 1024, 2

    import albumentations  # pylint: disable=import-outside-toplevel
    import cv2  # pylint: disable=import-outside-toplevel
    cv2.setNumThreads(1)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(args.samples, 32, 32, 3), dtype=np.uint8)
    y = rng.integers(0, 10, size=args.samples).astype(np.int64)
    np.random.seed(0)
    pipeline = fe_pipeline(x, y, args.batch_size)
    per_sample, batch_normalize = HandWritten(batch_normalize=False), HandWritten(batch_normalize=True)
    check_outputs(pipeline, per_sample, x, y)
    check_outputs(pipeline, batch_normalize, x, y)
    fe_epoch(pipeline)  # warm up both sides once
    per_sample.epoch(x, y, args.batch_size)

    print(machine_line(albumentations=albumentations.__version__, opencv=cv2.__version__))
    print(f"CIFAR-10 augmentation (pad 40, random crop 32, flip p=0.5, coarse dropout, normalize): {args.samples} "
          f"samples of 32x32x3 uint8, batch {args.batch_size}, one shuffled epoch per run, {args.pairs} pairs per "
          f"reference")
    fe_rate = rate_of(lambda: fe_epoch(pipeline))
    rows: List[List[str]] = []
    references: Dict[str, Any] = {"(b) hand-written, albumentations per sample": per_sample,
                                  "(c) hand-written, batch normalize": batch_normalize}
    for name, hand in references.items():
        pairs = alternating_pairs(fe_rate, rate_of(lambda hand=hand: hand.epoch(x, y, args.batch_size)), args.pairs)
        rows += summarize_pairs(f"vs {name[:3]}", {"(a) fe Pipeline": pairs}, name, unit="samples/s")
    print_table(rows, header=PAIRED_HEADER)


if __name__ == "__main__":
    main()
