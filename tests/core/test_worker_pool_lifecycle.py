"""The Pipeline's worker pool: a slow task does not idle the other workers, an abandoned epoch does not wait for (or
kill) a slow but healthy pool, a pool nobody closed is stopped by its finalizer, and the files the trainer writes for
tasks do not outlive a trainer killed with SIGKILL."""
from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import LambdaOp, NumpyOp
from fe_core.pipeline import Pipeline
from fe_core.pipeline._workers import WorkerPool
from pipeline_layer_helpers import shared_files, trainer_script, trainer_with_workers, wait_until_gone
from process_helpers import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see the workers")


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")


class SlowOn(NumpyOp):
    """Sleeps `seconds` on samples whose value is in `slow` (the first column of x is the sample's index)."""

    def __init__(self, slow, seconds, **kwargs):
        super().__init__(**kwargs)
        self.slow, self.seconds = set(slow), seconds

    def forward(self, data, state):
        if int(data[0]) in self.slow:
            time.sleep(self.seconds)
        return data * 2


def indexed(count: int) -> NumpyDataset:
    return NumpyDataset({"x": np.repeat(np.arange(count, dtype=np.float32)[:, None], 4, axis=1)})


def test_a_slow_task_does_not_leave_the_other_workers_idle():
    pipeline = Pipeline(train_data=indexed(64), batch_size=4, num_process=2,
                        ops=[SlowOn(slow=[0], seconds=1.0, inputs="x", outputs="x")])
    with pipeline.workers():
        with pipeline(mode="train", epoch=1, shuffle=False) as loader:
            iterator = iter(loader)
            batches = [next(iterator)["x"][:, 0]]  # the first task took a second in one worker
            stats = pipeline._worker_pool.stats()  # pylint: disable=protected-access
            batches += [batch["x"][:, 0] for batch in iterator]
    np.testing.assert_array_equal(np.concatenate(batches), np.arange(64) * 2)
    # Meanwhile the other worker went on with the next tasks, up to the window (4 tasks per worker ahead): 6 of them.
    # Task k to worker k % 2 with two in flight each, new tasks sent only as results were read in order, gave it 2.
    done = sorted(worker["tasks"] for worker in stats["workers"])
    assert done[1] >= 5, stats
    assert all(worker["idle_seconds"] >= 0 and worker["busy_seconds"] > 0 for worker in stats["workers"])


def test_an_abandoned_epoch_returns_at_once_and_the_slow_pool_keeps_its_workers():
    slow = [index for index in range(256) if index % 4 == 0]  # every task takes 0.4 s
    pipeline = Pipeline(train_data=indexed(256), batch_size=4, num_process=2,
                        ops=[SlowOn(slow=slow, seconds=0.4, inputs="x", outputs="x")])
    with pipeline.workers():
        with pipeline(mode="train", epoch=1, shuffle=False) as loader:
            iterator = iter(loader)
            first = next(iterator)
            pids = pipeline._worker_pool.pids()  # pylint: disable=protected-access
            began = time.perf_counter()
            iterator.close()  # tasks worth seconds are still out in the workers
            closed_in = time.perf_counter() - began
        assert closed_in < 0.3  # it does not wait for the tasks out in the workers
        pipeline.ops[0].slow = set()  # the workers keep their copy: their tasks stay slow, the pool must wait
        with pipeline(mode="train", epoch=1, shuffle=False) as loader:
            iterator = iter(loader)
            again = next(iterator)
            assert pipeline._worker_pool.pids() == pids  # pylint: disable=protected-access
            iterator.close()
    np.testing.assert_array_equal(first["x"], again["x"])
    assert not [pid for pid in pids if alive(pid)]


def test_a_pool_nobody_closed_is_stopped_by_its_finalizer():
    pipeline = Pipeline(train_data=indexed(64), batch_size=4, num_process=2, ops=[])
    pool = WorkerPool(pipeline.planner, 2)
    pool.start()
    pids, prefix = pool.pids(), pool.prefix
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    del pool
    gc.collect()
    wait_until_gone(pids)
    assert not [pid for pid in pids if alive(pid)]
    assert not shared_files(prefix)


EXIT_SCRIPT = trainer_script("""
    from fe_core.pipeline._workers import WorkerPool

    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((2000, 32, 32), np.float32)}), batch_size=32,
                        ops=[Slow(inputs="x", outputs="x")], num_process=2)
    pipeline._worker_pool = pool = WorkerPool(pipeline.planner, 2)  # opened, and never closed
    with pipeline(mode="train", epoch=1) as loader:
        next(iter(loader))
    print(pool.prefix, *pool.pids(), flush=True)
    time.sleep(0.3)  # the results of the tasks still out arrive in shared memory
""", sleep=0.002)


def test_a_pool_left_open_at_exit_leaves_no_process_or_shared_memory():
    env = dict(os.environ, FE_PIPELINE_MIN_WORKER_SAMPLES="0", OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    prefix, *pids = result.stdout.split()
    wait_until_gone(pids)
    assert not [pid for pid in pids if alive(int(pid))]
    assert not shared_files(prefix)


SCRIPT = trainer_script("""
    # 2048 indices per task: each task's index list goes through a shared-memory file the trainer writes
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.zeros((20000, 2), np.float32)}), batch_size=2048,
                        ops=[Slow(inputs="x", outputs="x")], num_process=2)
""", sleep=0.0005, add=0, hold_workers=True)


def test_task_files_the_trainer_wrote_do_not_outlive_a_killed_trainer():
    with trainer_with_workers(SCRIPT) as (trainer, prefix, workers):
        # each worker has one task queued behind the one it computes: its index file is waiting in shared memory
        assert any("t" in name[len(prefix):] for name in shared_files(prefix)), shared_files(prefix)
        trainer.send_signal(signal.SIGKILL)
        trainer.wait(timeout=60)
        wait_until_gone(workers, prefix, poll=0.1)
        assert not [pid for pid in workers if alive(pid)]
        assert not shared_files(prefix)


def test_a_worker_stopped_with_sigterm_removes_its_shared_memory_first():
    data = NumpyDataset({"x": np.zeros((512, 64, 64), np.float32)})  # 512 KiB batches: shared memory
    pipeline = Pipeline(train_data=data, batch_size=32, num_process=2,
                        ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")])
    with pipeline.workers():
        with pipeline(mode="train", epoch=1) as loader:
            held = list(loader)  # every batch held: the workers' segments and files stay in use
        pool = pipeline._worker_pool  # pylint: disable=protected-access
        prefix, pids = pool.prefix, pool.pids()
        assert shared_files(prefix)
        for pid in pids:
            os.kill(pid, signal.SIGTERM)  # as a launcher stopping the job does
        wait_until_gone(pids)
        assert not [pid for pid in pids if alive(pid)]
        assert not shared_files(prefix)
    assert len(held) == 16 and all(np.all(batch["x"] == 1) for batch in held)  # mapped memory outlives the files
