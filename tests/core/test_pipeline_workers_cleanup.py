"""A training process killed (SIGKILL) or interrupted (Ctrl-C) leaves no Pipeline worker and no shared memory."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pipeline_layer_helpers import shared_files, trainer_script, trainer_with_workers, wait_until_gone
from process_helpers import alive

SCRIPT = trainer_script("""
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((2000, 32, 32), np.float32)}), batch_size=32,
                        ops=[Slow(inputs="x", outputs="x")], num_process=2)
""", sleep=0.002, hold_workers=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see the worker processes")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_no_worker_process_or_shared_memory_outlives_the_trainer(how):
    with trainer_with_workers(SCRIPT) as (trainer, prefix, workers):
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
        time.sleep(0.3)  # the workers have batches in flight, in shared memory
        trainer.send_signal(how)
        trainer.wait(timeout=120)
        wait_until_gone(workers, prefix, poll=0.1)
        assert not [pid for pid in workers if alive(pid)]
        assert not shared_files(prefix)


CV2_SCRIPT = textwrap.dedent("""
    import numpy as np, cv2
    image = np.random.rand(1500, 1500, 3).astype(np.float32)
    for _ in range(3):  # OpenCV starts its thread pool in this process
        cv2.resize(image, (1200, 1200))
        cv2.GaussianBlur(image, (5, 5), 0)
    image = image[:300, :300]
    from fe_core.dataset import NumpyDataset
    from fe_core.op.numpyop import LambdaOp
    from fe_core.op.numpyop.multivariate import Resize
    from fe_core.pipeline import Pipeline
    blur = LambdaOp(fn=lambda x: x + cv2.GaussianBlur(image, (5, 5), 0).mean(), inputs="x", outputs="x")
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((32, 16, 16, 3), np.float32)}), batch_size=8,
                        num_process=2, ops=[Resize(8, 8, image_in="x"), blur])
    with pipeline.workers():
        with pipeline(mode="train", epoch=1) as loader:
            print(len(list(loader)), "batches", cv2.getNumThreads())
""")


def test_workers_forked_after_opencv_started_its_thread_pool_do_not_hang():
    env = dict(os.environ, FE_PIPELINE_MIN_WORKER_SAMPLES="0", OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", CV2_SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[:2] == ["4", "batches"]

