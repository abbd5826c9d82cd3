"""Helpers shared by the Pipeline tests (tests/core/test_pipeline_layers_*.py, test_pipeline_workers*.py and
test_worker_pool_*.py)."""
from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.pipeline._transport import shared_directory
from process_helpers import alive


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


#: The start of a trainer script: a Slow op (`time.sleep(SLOW)` per sample) and the names the scripts use.
SLOW_OP_SCRIPT = """
import time
import numpy as np
from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import LambdaOp, NumpyOp
from fe_core.pipeline import Pipeline

class Slow(NumpyOp):
    def forward(self, data, state):
        time.sleep(SLOW)
        return data + ADD
"""


#: The end of a trainer script that holds its `pipeline`'s workers busy: one batch taken, the pool's prefix and
#: worker pids printed on one line, then a minute's wait (to be killed or interrupted).
HOLD_WORKERS_SCRIPT = """
with pipeline.workers():
    with pipeline(mode="train", epoch=1) as loader:
        iterator = iter(loader)
        next(iterator)
        pool = pipeline._worker_pool
        print(pool.prefix, *pool.pids(), flush=True)
        time.sleep(60)
"""


def trainer_script(body: str, sleep: float, add: int = 1, hold_workers: bool = False) -> str:
    """SLOW_OP_SCRIPT (each sample sleeps `sleep` s and gets `add` added), then `body` (dedented), then
    HOLD_WORKERS_SCRIPT with `hold_workers`."""
    return (f"SLOW, ADD = {sleep!r}, {add!r}\n" + SLOW_OP_SCRIPT + textwrap.dedent(body) +
            (HOLD_WORKERS_SCRIPT if hold_workers else ""))


def shared_files(prefix: str) -> List[str]:
    """The shared-memory files (segments and task files) of the pool with this prefix."""
    return [name for name in os.listdir(shared_directory()) if name.startswith(prefix)]


def wait_until_gone(pids: Sequence[int], prefix: Optional[str] = None, seconds: float = 10.0,
                    poll: float = 0.05) -> None:
    """Wait at most `seconds` until no process of `pids` is alive (and, given a prefix, no file of that pool is
    left); the caller asserts what is left."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and (any(alive(int(pid)) for pid in pids) or
                                           (prefix is not None and shared_files(prefix))):
        time.sleep(poll)


@contextlib.contextmanager
def trainer_with_workers(script: str) -> Iterator[Tuple[subprocess.Popen, str, List[int]]]:
    """Run `script` in a trainer process that prints its pool's prefix and worker pids on one line; yields the
    trainer, the prefix and the pids, and kills whatever of them is left afterwards."""
    env = dict(os.environ, FE_PIPELINE_MIN_WORKER_SAMPLES="0", OMP_NUM_THREADS="1")
    # SIGINT at its default, as in a terminal (a suite started in the background by a non-interactive shell would hand
    # the trainer SIGINT ignored, and a test's Ctrl-C would never arrive)
    trainer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers: List[int] = []
    try:
        line = trainer.stdout.readline().split()
        assert line, trainer.stderr.read()
        prefix, workers = line[0], [int(pid) for pid in line[1:]]
        yield trainer, prefix, workers
    finally:
        for pid in [trainer.pid] + workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        trainer.wait(timeout=10)
        trainer.stdout.close()
        trainer.stderr.close()
