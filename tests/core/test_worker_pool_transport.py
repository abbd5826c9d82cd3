"""The workers' reused shared-memory segments: a result is written into a segment only after every array the trainer
decoded from it is gone, so batches user code still holds never change; dropped batches free their segment for
reuse; with every segment held, results go through new files; the pool's batches are the same either way."""
from __future__ import annotations

import gc
import os
import secrets

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import LambdaOp
from fe_core.pipeline import Pipeline
from fe_core.pipeline._transport import SegmentReader, SegmentRing, remove_files, shared_directory


@pytest.fixture
def ring_and_reader():
    directory = shared_directory()
    prefix = f"fe-test-ring-{os.getpid()}-{secrets.token_hex(3)}-"
    released = []
    ring = SegmentRing(directory, prefix, count=2, largest=1 << 20)
    reader = SegmentReader(directory, released.append)
    yield ring, reader, released, prefix
    remove_files(directory, prefix)


def batch(value: float):
    return {"x": np.full((64, 32), value, np.float32), "y": np.arange(64) + value}


def test_a_held_result_never_changes_and_a_dropped_one_frees_its_segment(ring_and_reader):
    ring, reader, released, prefix = ring_and_reader
    first = reader.decode(ring.encode(batch(1), f"{prefix}f1", 1024))
    second = reader.decode(ring.encode(batch(2), f"{prefix}f2", 1024))
    # both segments are held: the third result goes through a new file, and nothing held is overwritten
    third_message = ring.encode(batch(3), f"{prefix}f3", 1024)
    assert len(third_message) == 3 and third_message[1] == f"{prefix}f3"
    third = reader.decode(third_message)
    for value, result in ((1, first), (2, second), (3, third)):
        np.testing.assert_array_equal(result["x"], np.full((64, 32), value, np.float32))
        np.testing.assert_array_equal(result["y"], np.arange(64) + value)
    assert released == []
    x_only = first["x"]
    del first
    gc.collect()
    assert released == []  # one array of the first result is still alive
    del x_only
    gc.collect()
    assert len(released) == 1
    ring.release(released)
    fourth_message = ring.encode(batch(4), f"{prefix}f4", 1024)
    assert len(fourth_message) == 4 and fourth_message[1] == released[0]  # the freed segment, written again
    fourth = reader.decode(fourth_message)
    np.testing.assert_array_equal(fourth["x"], np.full((64, 32), 4, np.float32))
    np.testing.assert_array_equal(second["x"], np.full((64, 32), 2, np.float32))


def test_small_and_oversized_results_do_not_use_segments(ring_and_reader):
    ring, reader, _, prefix = ring_and_reader
    small = ring.encode({"x": np.ones(4)}, f"{prefix}small", 1024)
    assert small[1] is None  # in band
    large = ring.encode({"x": np.ones(1 << 18)}, f"{prefix}large", 1024)  # 2 MiB > largest
    assert len(large) == 3 and large[1] == f"{prefix}large"
    np.testing.assert_array_equal(reader.decode(large)["x"], np.ones(1 << 18))
    np.testing.assert_array_equal(reader.decode(small)["x"], np.ones(4))


def test_pool_batches_are_the_same_whether_held_or_dropped(monkeypatch):
    monkeypatch.setenv("FE_PIPELINE_MIN_WORKER_SAMPLES", "0")
    data = np.random.default_rng(0).random((1024, 8, 16)).astype(np.float32)

    def pipeline(num_process):
        return Pipeline(train_data=NumpyDataset({"x": data}), batch_size=32, num_process=num_process,
                        ops=[LambdaOp(fn=lambda x: x * 2 + 1, inputs="x", outputs="x")])

    expected = data * 2 + 1
    workers = pipeline(2)
    with workers.workers():
        for epoch in (1, 2):  # batches dropped as they come: segments are reused
            with workers(mode="train", epoch=epoch, shuffle=False) as loader:
                for index, result in enumerate(loader):
                    np.testing.assert_array_equal(result["x"], expected[32 * index:32 * (index + 1)])
        with workers(mode="train", epoch=3, shuffle=False) as loader:
            held = [result["x"] for result in loader]  # all held: later results go through new files
    np.testing.assert_array_equal(np.concatenate(held), expected)


def test_results_that_outgrow_every_free_segment_replace_one_instead_of_new_files_forever():
    directory = shared_directory()
    prefix = f"fe-test-ring-{os.getpid()}-{secrets.token_hex(3)}-"
    released = []
    ring = SegmentRing(directory, prefix, count=1, largest=1 << 20)
    reader = SegmentReader(directory, released.append)
    try:
        small = reader.decode(ring.encode({"x": np.ones((4, 1024), np.float32)}, f"{prefix}f1", 1024))
        first_segment = sorted(os.listdir(directory))
        del small
        gc.collect()
        ring.release(released)
        # a larger result (per-batch padding): the one free segment is too small and the ring is full
        message = ring.encode({"x": np.full((16, 1024), 2, np.float32)}, f"{prefix}f2", 1024)
        assert len(message) == 4  # in a (new) segment, not a new file for this and every later result
        assert f"{prefix}s0" not in os.listdir(directory) and f"{prefix}s0" in message[3]
        larger = reader.decode(message)
        np.testing.assert_array_equal(larger["x"], np.full((16, 1024), 2, np.float32))
        assert list(reader.mappings) == [message[1]]  # the receiver let the removed segment's mapping go
        assert f"{prefix}s0" in first_segment
    finally:
        remove_files(directory, prefix)
