"""Pipeline layering, the Pipeline owns its pool: a bare `with pipeline(...) as loader` uses worker processes for a
large enough epoch (as `fit` does) and stops them when its context ends, however it ends; a loader abandoned
mid-epoch never feeds another epoch."""
from __future__ import annotations

import os
import random
from typing import Any, Dict, List

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.op.numpyop import NumpyOp
from fe_core.pipeline import Pipeline
from pipeline_layer_helpers import alive, same
from fe_core.pipeline._transport import shared_directory


class Jitter(NumpyOp):
    def forward(self, data, state):
        return data + np.float32(random.random() + np.random.rand())


def build(num_process: int, count: int = 1100) -> Pipeline:
    data = {"x": np.zeros((count, 3), np.float32), "y": np.arange(count)}
    return Pipeline(train_data=NumpyDataset(data), batch_size=100, ops=[Jitter(inputs="x", outputs="x")],
                    num_process=num_process)


def as_arrays(batch: Dict[str, Any]) -> Dict[str, np.ndarray]:
    return {key: np.array(value) for key, value in batch.items()}


def leftovers(prefix: str) -> List[str]:
    return [name for name in os.listdir(shared_directory()) if name.startswith(prefix)]


def test_a_bare_loader_starts_workers_for_a_large_epoch_and_stops_them_with_its_context():
    enable_deterministic(5)
    with build(0)(mode="train", epoch=1) as loader:
        expected = [as_arrays(batch) for batch in loader]
    enable_deterministic(5)
    pipeline = build(2)
    got, pids = [], set()
    with pipeline(mode="train", epoch=1) as loader:  # more than 1024 samples: worth the workers
        for batch in loader:
            got.append(as_arrays(batch))
            pids.update(pipeline._worker_pool.pids())
        prefix = pipeline._worker_pool.prefix
    assert len(pids) == 2 and same(expected, got) and len(got) == 11
    assert pipeline._worker_pool is None and not any(alive(pid) for pid in pids) and not leftovers(prefix)


@pytest.mark.parametrize("how", ["break", "exception"])
def test_closing_a_bare_loader_early_leaves_no_process_or_shared_memory_file(how):
    pipeline = build(2)
    with pytest.raises(RuntimeError, match="stop here") if how == "exception" else _nothing():
        with pipeline(mode="train", epoch=1) as loader:
            for batch in loader:
                pids, prefix = pipeline._worker_pool.pids(), pipeline._worker_pool.prefix
                if how == "break":
                    break
                raise RuntimeError("stop here")
    assert len(pids) == 2 and not any(alive(pid) for pid in pids) and not leftovers(prefix)
    with pipeline(mode="train", epoch=2) as loader:  # the next bare loader starts workers afresh
        assert len(list(loader)) == 11


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_abandoned_loader_never_feeds_the_next_epoch(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")

    def run(pipeline: Pipeline) -> List[Dict[str, np.ndarray]]:
        batches = []
        with pipeline.workers():
            with pipeline(mode="train", epoch=1) as loader:
                abandoned = iter(loader)
                batches += [as_arrays(next(abandoned)) for _ in range(2)]  # the iterator stays open, tasks in flight
            for epoch in (2, 3):
                with pipeline(mode="train", epoch=epoch) as loader:
                    batches += [as_arrays(batch) for batch in loader]
            abandoned.close()
        return batches

    enable_deterministic(9)
    expected = run(build(0, count=600))
    enable_deterministic(9)
    got = run(build(2, count=600))
    assert len(expected) == 2 + 6 + 6 and same(expected, got)
