"""Pipeline layering, one random stream: an epoch's draws are the same whatever path or executor it takes, so the
batches and the trainer's random state after each epoch are the same for any num_process."""
from __future__ import annotations

import random
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.op.numpyop import NumpyOp
from fe_core.pipeline import Pipeline
from pipeline_layer_helpers import random_images, same


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")  # these tests' epochs are tiny on purpose


class BatchJitter(NumpyOp):
    """A batch op (after Batch) drawing from numpy's global random state, on the whole batch at once (vectorised: the
    whole-batch path keeps it in the trainer)."""

    def forward_batch(self, data, state):
        return data + np.random.rand(*np.shape(data)).astype(np.float32)


def run(pipeline: Pipeline, epochs: int) -> Tuple[List[Dict[str, np.ndarray]], List[Any], List[int]]:
    """Every batch of `epochs` shuffled epochs, the trainer's random draw after each epoch, and the worker pids."""
    batches, after, pids = [], [], []
    with pipeline.workers():
        for epoch in range(1, epochs + 1):
            with pipeline(mode="train", epoch=epoch) as loader:
                for batch in loader:
                    batches.append({key: np.array(value) for key, value in batch.items()})
            after.append((float(np.random.rand()), random.random()))
            if pipeline._worker_pool is not None:
                pids += pipeline._worker_pool.pids()
    return batches, after, pids


def test_get_batch_dataset_through_read_image_gives_the_same_batches_for_0_1_and_2_workers(tmp_path):
    from fe_core.op.numpyop.univariate import ReadImage
    paths = random_images(tmp_path, 64, (4, 3, 3), seed=5)
    results = {}
    for num_process in (0, 1, 2):
        pipeline = Pipeline(train_data=NumpyDataset({"x": np.array(paths), "y": np.arange(64)}), batch_size=8,
                            ops=[ReadImage(inputs="x", outputs="x")], num_process=num_process)
        enable_deterministic(1)
        results[num_process] = run(pipeline, epochs=3)
    batches, after, pids = results[0]
    assert len(batches) == 24 and batches[0]["x"].shape == (8, 4, 3, 3) and not pids
    orders = [np.concatenate([batch["y"] for batch in batches[epoch * 8:(epoch + 1) * 8]]) for epoch in range(3)]
    assert all(sorted(order.tolist()) == list(range(64)) for order in orders)
    assert not np.array_equal(orders[1], orders[2])  # shuffled afresh every epoch
    for num_process in (1, 2):
        assert same(batches, results[num_process][0]), num_process
        assert after == results[num_process][1], num_process  # the trainer's random state after each epoch
        assert len(set(results[num_process][2])) == num_process  # the decoding ran in the workers


def test_whole_batches_and_per_sample_tasks_draw_alike():
    """The vectorised whole-batch path (here) and the per-sample path (workers) of the same data give the same
    batches, random batch ops included, and leave the trainer's random state alike."""
    from fe_core.op.numpyop import Batch, LambdaOp
    data = {"x": np.arange(96, dtype=np.float32).reshape(48, 2), "y": np.arange(48)}
    enable_deterministic(3)
    whole = run(Pipeline(train_data=NumpyDataset(data), num_process=2,
                         ops=[Batch(batch_size=5), BatchJitter(inputs="x", outputs="x")]), epochs=2)
    enable_deterministic(3)
    identity = LambdaOp(fn=lambda value: value, inputs="y", outputs="y")  # one per-sample op: the sample path
    samples = run(Pipeline(train_data=NumpyDataset(data), num_process=2,
                           ops=[identity, Batch(batch_size=5), BatchJitter(inputs="x", outputs="x")]), epochs=2)
    assert not whole[2] and len(set(samples[2])) == 2
    assert same(whole[0], samples[0]) and whole[1] == samples[1]
