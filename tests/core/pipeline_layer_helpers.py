"""Helpers shared by the Pipeline layering tests (tests/core/test_pipeline_layers_*.py)."""
from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from process_helpers import alive  # noqa: F401  (re-exported for the layering tests)


def same(first: List[Dict[str, Any]], second: List[Dict[str, Any]]) -> bool:
    """Whether two lists of batches are bitwise equal (same keys, same arrays)."""
    return len(first) == len(second) and all(
        a.keys() == b.keys() and all(np.array_equal(a[key], b[key]) for key in a) for a, b in zip(first, second))


def epochs(pipeline: Any, count: int = 2, steps_per_epoch: Optional[int] = None
           ) -> Tuple[List[Dict[str, np.ndarray]], set]:
    """Every batch of `count` training epochs (of `steps_per_epoch` batches) inside one `workers()` block, and the
    worker pids seen (an InterleaveDataset's members have a pool each)."""
    batches, pids = [], set()
    with pipeline.workers():
        for epoch in range(1, count + 1):
            with pipeline(mode="train", epoch=epoch, steps_per_epoch=steps_per_epoch) as loader:
                for batch in loader:
                    batches.append({key: np.array(value) for key, value in batch.items()})
                    pool = pipeline._worker_pool  # pylint: disable=protected-access
                    for each in [pool] + list(getattr(pool, "member_pools", None) or ()) if pool else ():
                        pids.update(each.pids())
    return batches, pids


def interrupted_and_resumed(build: Callable[[int], Any], count: int = 3) -> Tuple[List[Dict[str, np.ndarray]], Any]:
    """A run of `build(2)` (2 worker processes) stopped after `count` batches of epoch 1 with a checkpoint (the
    Pipeline's state and the global random states), then, as in a fresh process (another numpy random state), a new
    `build(2)` restored from it. Returns the batches seen before the stop and the restored Pipeline."""
    interrupted = build(2)
    with interrupted.workers():
        with interrupted(mode="train", epoch=1) as loader:
            iterator = iter(loader)
            seen = [{key: np.array(value) for key, value in next(iterator).items()} for _ in range(count)]
            checkpoint = interrupted.get_state()
            numpy_state, python_state = np.random.get_state(), random.getstate()
    np.random.seed(999)  # a fresh process: another random state, and fresh index maps
    resumed = build(2)
    resumed.set_state(checkpoint)
    np.random.set_state(numpy_state)
    random.setstate(python_state)
    return seen, resumed


def random_images(directory: Any, count: int, shape: Tuple[int, ...], seed: int, alternate_jpg: bool = False
                  ) -> List[str]:
    """Write `count` random uint8 images of `shape` into `directory` (PNG; every other one JPEG with
    `alternate_jpg`) with OpenCV, and return their paths."""
    import cv2  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(seed)
    paths = []
    for index in range(count):
        path = str(directory / f"{index}.{'png' if index % 2 or not alternate_jpg else 'jpg'}")
        cv2.imwrite(path, rng.integers(0, 255, shape, dtype=np.uint8))
        paths.append(path)
    return paths
