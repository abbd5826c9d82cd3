#!/usr/bin/env python3
"""How fast the Pipeline reads a LabeledDirDataset of image files, next to a hand-written loop doing the same reads.

Run from the repository root (no install needed; needs OpenCV, fe-core's `image` extra):

    python tools/bench/bench_dataset.py [--images 2000] [--sizes 32 64] [--batch-size 32] [--pairs 6] [--quick]

Measured in one process, single-threaded (OMP_NUM_THREADS=1, cv2.setNumThreads(0)), on a temporary directory of
PNG images (32x32 like CIFAR, and 64x64) in 10 class folders. Each run is one shuffled epoch producing uint8
(n, size, size, 3) RGB batches and int labels:

  (a) fe: `LabeledDirDataset(root)` + `Pipeline(batch_size=..., ops=[ReadImage("x", "x")])`;
  (b) hand-written: a list of (path, label), np.random.permutation, then per batch cv2.imread + cvtColor for each
      file, np.stack, and the labels gathered with fancy indexing.

Epochs of (a) and (b) run in counterbalanced back-to-back pairs (see pairing.py); the ratio is fe / hand-written
(target >= 0.9x). Building the dataset (listing the files) is timed separately. ReadImage is batch-capable: the
Pipeline gathers a batch's paths and labels with `LabeledDirDataset.get_batch` and reads the batch's images in one
op call, so fe's cost per image is little more than the decode the hand-written loop does too.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import List, Tuple  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "fe-core" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from fe_core.dataset import LabeledDirDataset  # noqa: E402
from fe_core.op.numpyop.univariate.read_image import ReadImage  # noqa: E402
from fe_core.pipeline import Pipeline  # noqa: E402

from bench_table import PAIRED_HEADER, machine_line, print_table, summarize_pairs  # noqa: E402
from pairing import alternating_pairs  # noqa: E402


def write_images(root: str, count: int, size: int) -> None:
    """`count` random PNG images of size x size x 3 in 10 class folders."""
    rng = np.random.default_rng(0)
    for index in range(count):
        folder = os.path.join(root, f"class_{index % 10}")
        os.makedirs(folder, exist_ok=True)
        cv2.imwrite(os.path.join(folder, f"{index}.png"), rng.integers(0, 256, (size, size, 3), dtype=np.uint8))


def hand_written_files(root: str) -> Tuple[List[str], np.ndarray]:
    """The file list (sorted, as LabeledDirDataset lists them) and labels, collected by hand."""
    paths, labels = [], []
    for label, name in enumerate(sorted(os.listdir(root))):
        for file_name in sorted(os.listdir(os.path.join(root, name))):
            paths.append(os.path.join(root, name, file_name))
            labels.append(label)
    return paths, np.asarray(labels, dtype=np.int64)


CLOCK = time.perf_counter  # --cpu-time: time.process_time (this process's CPU time, robust on a busy shared machine)


def hand_written_epoch(paths: List[str], labels: np.ndarray, batch_size: int) -> float:
    """One shuffled epoch of batches read by hand; returns samples/s."""
    start = CLOCK()
    order = np.random.permutation(len(paths))
    produced = 0
    for begin in range(0, len(order), batch_size):
        indices = order[begin:begin + batch_size]
        images = np.stack([cv2.cvtColor(cv2.imread(paths[i], cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB) for i in indices])
        batch_labels = labels[indices]
        produced += len(images) + 0 * len(batch_labels)
    return produced / (CLOCK() - start)


def fe_epoch(pipeline: Pipeline) -> float:
    """One shuffled epoch of the Pipeline; returns samples/s."""
    start = CLOCK()
    produced = 0
    with pipeline(mode="train", epoch=1) as loader:
        for batch in loader:
            produced += len(batch["x"])
    return produced / (CLOCK() - start)


def check_same_batches(pipeline: Pipeline, paths: List[str], labels: np.ndarray, batch_size: int) -> None:
    """The Pipeline's first batch holds exactly images and labels the hand-written loop reads: each of its images is,
    pixel for pixel, the RGB image cv2 reads from one of the files, with that file's label, and no file twice (which
    files a shuffled epoch starts with is fe's own seeded draw)."""
    with pipeline(mode="train", epoch=1) as loader:
        batch = next(iter(loader))
    by_pixels = {}
    for path, label in zip(paths, labels):
        image = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
        by_pixels.setdefault(image.tobytes(), []).append(label)
    images, batch_labels = np.asarray(batch["x"]), np.asarray(batch["y"])
    assert len(images) == batch_size, f"a batch of {len(images)} images, expected {batch_size}"
    assert len({image.tobytes() for image in images}) == batch_size, "the batch repeats an image"
    for image, label in zip(images, batch_labels):
        assert image.tobytes() in by_pixels, "a batch image is not any file's image as cv2 reads it"
        assert label in by_pixels[image.tobytes()], f"label {label} is not the image's file's label"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=6, help="counterbalanced epoch pairs (even)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with the process's CPU time instead of the wall clock (less noise on a busy machine)")
    args = parser.parse_args()
    global CLOCK  # pylint: disable=global-statement
    if args.cpu_time:
        CLOCK = time.process_time
    if args.quick:
        args.images, args.pairs, args.sizes = 200, 2, [32]
    cv2.setNumThreads(0)
    print(machine_line(opencv=cv2.__version__))
    print(f"LabeledDirDataset + ReadImage vs hand-written cv2 loop: {args.images} PNG images per size, batch "
          f"{args.batch_size}, {args.pairs} epoch pairs, {'CPU' if args.cpu_time else 'wall-clock'} time")
    rows: List[List[str]] = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as root:
            write_images(root, args.images, size)
            start = time.perf_counter()
            dataset = LabeledDirDataset(root)
            listing = time.perf_counter() - start
            paths, labels = hand_written_files(root)
            pipeline = Pipeline(train_data=dataset, batch_size=args.batch_size,
                                ops=[ReadImage(inputs="x", outputs="x")])
            check_same_batches(pipeline, paths, labels, args.batch_size)
            fe_epoch(pipeline), hand_written_epoch(paths, labels, args.batch_size)  # warm the file cache
            pairs = alternating_pairs(lambda: fe_epoch(pipeline),
                                      lambda: hand_written_epoch(paths, labels, args.batch_size), args.pairs)
            print(f"  {size}x{size}x3: listing {args.images} files took {listing * 1000:.1f} ms")
            rows += summarize_pairs(f"{size}x{size} PNG", {"fe Pipeline": pairs}, "hand-written", unit="samples/s")
    print_table(rows, PAIRED_HEADER)


if __name__ == "__main__":
    main()
