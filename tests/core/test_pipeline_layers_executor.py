"""Pipeline layering, where a task runs: decided from the plan (whole vectorised batches here, per-sample work in the
workers), so batch ops that loop over samples reach the workers, and an InterleaveDataset's members share the
Pipeline's `num_process` workers without starting more processes than asked for."""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np
import pytest

from fe_core.dataset import BatchDataset, ExtendDataset, InterleaveDataset, NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.op.numpyop import Batch, NumpyOp, RemoveIf
from fe_core.pipeline import Pipeline
from pipeline_layer_helpers import epochs, same


@pytest.fixture(autouse=True)
def workers_for_small_epochs(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")  # these tests' epochs are tiny on purpose


class SampleNoise(NumpyOp):
    """A user op listed after Batch: NumpyOp's default forward_batch runs `forward` sample by sample."""

    def forward(self, data, state):
        return np.asarray(data, dtype=np.float32) + np.float32(np.random.rand())


class BatchScale(NumpyOp):
    """A user batch op that computes on the whole batch at once (its own forward_batch)."""

    def forward_batch(self, data, state):
        return data * np.float32(2)


def numbers(count: int, offset: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(offset, offset + count, dtype=np.float32), "y": np.arange(count) + offset})


def run(ops, num_process: int, data=None) -> Tuple[List[Dict[str, np.ndarray]], set]:
    pipeline = Pipeline(train_data=data if data is not None else numbers(40), ops=ops, num_process=num_process)
    enable_deterministic(3)
    return epochs(pipeline)


def test_a_batch_op_that_loops_over_samples_runs_in_the_workers_with_the_same_batches():
    expected, no_pids = run([Batch(batch_size=8), SampleNoise(inputs="x", outputs="x")], 0)
    got, pids = run([Batch(batch_size=8), SampleNoise(inputs="x", outputs="x")], 2)
    assert len(expected) == 10 and not no_pids
    assert len(pids) == 2  # per-sample work in a batch op: the workers ran it
    assert same(expected, got)


def test_an_augmentation_listed_after_batch_runs_in_the_workers_with_the_same_batches():
    pytest.importorskip("albumentations")
    from fe_core.op.numpyop.multivariate import Rotate
    images = NumpyDataset({"x": np.random.default_rng(1).random((32, 6, 6, 1)).astype(np.float32)})
    expected, _ = run([Batch(batch_size=8), Rotate(image_in="x", limit=30)], 0, images)
    images = NumpyDataset({"x": np.random.default_rng(1).random((32, 6, 6, 1)).astype(np.float32)})
    got, pids = run([Batch(batch_size=8), Rotate(image_in="x", limit=30)], 2, images)
    assert len(pids) == 2 and len(expected) == 8 and same(expected, got)


def test_vectorised_batch_ops_stay_in_the_trainer():
    _, pids = run([Batch(batch_size=8), BatchScale(inputs="x", outputs="x")], 2)
    assert not pids


def test_interleave_members_share_num_process_workers():
    def data():
        return InterleaveDataset([numbers(16), numbers(16, 100), numbers(16, 200)], pattern=[0, 1, 2])

    expected, _ = run([SampleNoise(inputs="x", outputs="j"), Batch(batch_size=4)], 0, data())
    got, pids = run([SampleNoise(inputs="x", outputs="j"), Batch(batch_size=4)], 2, data())
    assert 1 <= len(pids) <= 2  # three members, but never more processes than num_process
    assert same(expected, got)


@pytest.mark.parametrize("size, task_size", [(23, 4), (16, 4), (5, 16), (1, 1)])
def test_a_one_pass_task_stream_cuts_at_the_end_then_goes_on_into_the_next_passes(size, task_size):
    from itertools import islice
    from fe_core.pipeline._sample_epoch import TaskStream
    first = np.random.default_rng(0).permutation(size)
    later = [np.random.default_rng([9, lap]).permutation(size) for lap in range(1, 12 * task_size // size + 2)]
    stream = [first] + later  # positions p: pass p // size, offset p % size
    tasks = list(islice(iter(TaskStream(size, first, True, 9, task_size, one_pass=True)), 10))
    expected_starts = list(range(0, size, task_size))
    expected_starts += list(range(size, size + task_size * (10 - len(expected_starts)), task_size))
    assert [start for start, _ in tasks] == expected_starts
    for start, indices in tasks:
        stop = min(start + task_size, size) if start < size else start + task_size
        assert indices.tolist() == [int(stream[p // size][p % size]) for p in range(start, stop)]


MULTI_PASS = {  # epochs that go on into further passes (re-shuffled orders, redrawn index maps) or filter for good
    "BatchDataset-second-pass": (lambda: BatchDataset([numbers(20), numbers(12, 100)], num_samples=[3, 2]), None, [],
                                 13),
    "ExtendDataset-second-pass": (lambda: ExtendDataset(numbers(10), spoof_length=27), 4, [], 10),
    "removed-for-good": (lambda: numbers(23), 4, [RemoveIf(fn=lambda y: y % 5 == 0, inputs="y", replacement=False)],
                         None),
    "removed-for-good-steps": (lambda: numbers(23), 4,
                               [RemoveIf(fn=lambda y: y % 5 == 0, inputs="y", replacement=False)], 9),
    "unbatched": (lambda: numbers(23), None, [], None),
}


@pytest.mark.parametrize("kind", list(MULTI_PASS))
def test_multi_pass_and_filtered_epochs_give_the_same_batches_in_workers(kind):
    make, batch_size, ops, steps = MULTI_PASS[kind]
    results = {}
    for num_process in (0, 2):
        pipeline = Pipeline(train_data=make(), batch_size=batch_size, num_process=num_process,
                            ops=list(ops) + [SampleNoise(inputs="x", outputs="j")])
        enable_deterministic(8)
        results[num_process] = epochs(pipeline, steps_per_epoch=steps)
    (expected, _), (got, pids) = results[0], results[2]
    assert expected and len(pids) == 2 and same(expected, got)


def test_where_tasks_run_is_decided_from_the_plan_alone_with_its_reason(monkeypatch):
    from fe_core.pipeline.executors import choose_executor
    per_sample = Pipeline(train_data=numbers(40), batch_size=8, ops=[SampleNoise(inputs="x", outputs="x")])
    whole = Pipeline(train_data=numbers(40), ops=[Batch(batch_size=8), BatchScale(inputs="x", outputs="x")])
    per_sample_plan = per_sample.planner.plan("train", 1, "", None)
    whole_plan = whole.planner.plan("train", 1, "", None)
    assert per_sample._worker_pool is None and whole._worker_pool is None  # no pool exists, none is started
    assert choose_executor(per_sample_plan, 40, in_process=False) == ("pool", "per-sample work")
    assert choose_executor(whole_plan, 40, in_process=False)[0] == "here"
    assert choose_executor(per_sample_plan, 40, in_process=True)[0] == "here"
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "1024")
    kind, reason = choose_executor(per_sample_plan, 40, in_process=False)
    assert kind == "here" and "too small" in reason
    assert per_sample._worker_pool is None
