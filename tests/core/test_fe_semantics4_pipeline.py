"""FastEstimator semantics, part 4 (issue 43), numpy: key pruning after the ops that read a key, filters with
replacement, InterleaveDataset, get_results/benchmark, ExtendDataset and loader batches' string columns."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.dataset import InterleaveDataset, NumpyDataset
from fe_core.op.numpyop import RemoveIf
from fe_core.pipeline import Pipeline
from semantics4_pipeline_helpers import (TAGGED_EXPECTED, list_batch_pipeline, make_coco, tagged_interleave_pipeline,
                                         tagged_values, yolo_style_pipeline)


# ------------------------------------------------------------------------------------- item 1: YOLOv5's image_id
def test_mscoco_samples_carry_their_image_id_as_fastestimators_do(tmp_path):
    ds = make_coco(str(tmp_path), image_ids=(7, 42))
    assert [ds[0]["image_id"], ds[1]["image_id"]] == [7, 42] and "image_id" in ds.keys()


def test_an_op_reads_image_id_before_delete_drops_it(tmp_path):
    results = yolo_style_pipeline(str(tmp_path)).get_results(mode="eval")
    assert "image_id" not in results
    assert np.asarray(results["image"])[:, 0].tolist() == [1.0, 2.0]  # made from image_id by the op before Delete
    assert np.asarray(results["y"]).tolist() == [1, 0]


# ------------------------------------------------------------------------------------------- item 2: filters
def _epoch(pipeline, **kwargs):
    with pipeline(mode="train", shuffle=False, **kwargs) as loader:
        return [np.asarray(batch["x"]).tolist() for batch in loader]


def test_a_partial_batch_waits_behind_the_next_full_one():
    # RemoveIf's contract: replacements keep every batch full, and the kept samples of a partial batch may appear
    # one batch later (FastEstimator yields the next full batch first and combines the partial one afterwards)
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(10)}), batch_size=4,
                        ops=[RemoveIf(fn=lambda x: x == 1, inputs="x")])
    assert _epoch(pipeline) == [[4, 5, 6, 7], [0, 2, 3, 8], [9, 0]]
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(10)}), batch_size=4,
                        ops=[RemoveIf(fn=lambda x: x % 3 == 1, inputs="x")])  # partial batches fill each other
    assert _epoch(pipeline) == [[0, 2, 3, 5], [6, 8, 9, 0], [2, 3]]


def test_a_partial_batch_is_combined_at_the_end_of_the_epoch():
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(12)}), batch_size=4,
                        ops=[RemoveIf(fn=lambda x: x in (1, 6), inputs="x")])
    assert _epoch(pipeline, steps_per_epoch=3) == [[0, 2, 3, 4], [8, 9, 10, 11], [5, 7, 0, 2]]


def _interleaved(replacement):
    members = {"a": NumpyDataset({"x": np.arange(10)}), "b": NumpyDataset({"x": np.arange(100, 120)})}
    return Pipeline(train_data=InterleaveDataset(members), batch_size=2,
                    ops=[RemoveIf(fn=lambda x: x in (1, 4, 104), replacement=replacement, inputs="x")])


def test_interleaved_filtering_drops_a_pattern_worth_of_steps_for_each_filtered_sample():
    # the documented limitation: "an entire pattern-worth of data will be dropped every time that an undesired
    # element is encountered": 1 takes a's [0, 1] and b's [100, 101], 4 a's [4, 5] and b's [104, 105] (whose own
    # filtered sample starts no new drop), and 104 is in that worth already
    batches = _epoch(_interleaved(replacement=False))
    assert batches == [[2, 3], [102, 103], [6, 7], [106, 107], [8, 9], [108, 109]]


def test_interleaved_filtering_with_replacement_keeps_the_number_of_steps():
    batches = _epoch(_interleaved(replacement=True))
    assert len(batches) == 10 and [batch[0] < 100 for batch in batches] == [True, False] * 5
    assert batches[6:] == [[2, 3], [102, 103], [6, 7], [106, 107]]  # the next pass, dropping the same steps


# ---------------------------------------------------------------------------- item 3: get_results, benchmark
def test_get_results_of_a_batch_dataset_whose_member_items_are_lists_of_samples():
    batch = list_batch_pipeline(disjoint=False).get_results()
    assert np.asarray(batch["x"]).shape == (7, 2)  # 2 samples + one item of 5
    assert sorted(np.asarray(batch["y"]).tolist()) == [0, 0, 1, 1, 2, 3, 4]
    batch = list_batch_pipeline(disjoint=True).get_results()  # 5 samples merged with the item's 5
    assert np.asarray(batch["x"]).shape == (5, 2) and np.asarray(batch["x1"]).shape == (5, 2)


# ------------------------------------------------------------------- item 4: InterleaveDataset ds tags
def test_interleaved_members_run_the_ops_of_their_tag_and_of_the_pipeline_ds_id():
    results = tagged_interleave_pipeline().get_results(mode="train", num_steps=4, ds_id="source")
    assert tagged_values(results) == TAGGED_EXPECTED


def test_benchmark_of_a_batch_dataset(capsys):
    from fe_core.dataset import BatchDataset
    data = BatchDataset([NumpyDataset({"x": np.arange(6)}), NumpyDataset({"x": np.arange(10, 16)})], num_samples=[2, 1])
    speeds = Pipeline(train_data=data).benchmark(num_steps=4, log_interval=2)
    assert set(speeds) == {""} and speeds[""]["samples_per_sec"] == pytest.approx(3 * speeds[""]["steps_per_sec"])
    assert "4 steps, 12 samples" in capsys.readouterr().out


# ------------------------------------------------------- items 2 and 5: ExtendDataset, batched replacement filters
def test_an_extend_dataset_replaces_filtered_samples_with_the_rest_of_the_data():
    from fe_core.dataset import ExtendDataset
    data = ExtendDataset(NumpyDataset({"x": np.arange(12)}), spoof_length=4)
    pipeline = Pipeline(train_data=data, batch_size=2, num_process=0,
                        ops=[RemoveIf(fn=lambda x: x in (0, 2), inputs="x")])
    assert _epoch(pipeline) == [[1, 3], [4, 5]]  # 4 and 5 come next in the pass, not 1 and 3 again


def test_an_extended_batch_dataset_replaces_filtered_batches_with_the_rest_of_the_data():
    from fe_core.dataset import BatchDataset, ExtendDataset
    data = ExtendDataset(BatchDataset(NumpyDataset({"x": np.arange(8)}), num_samples=2), spoof_length=1)
    pipeline = Pipeline(train_data=data, num_process=0, ops=[RemoveIf(fn=lambda x: x < 6, inputs="x")])
    assert _epoch(pipeline) == [[6, 7]]


def test_a_batched_replacement_filter_keeps_drawing_after_a_long_run_of_rejected_batches():
    from fe_core.dataset import BatchDataset
    from fe_core.warning_lines import FEWarning
    calls = []

    def reject_the_first_1200_batches(x):
        calls.append(x)
        return len(calls) <= 1200  # one call per rejected batch: its first sample

    data = BatchDataset(NumpyDataset({"x": np.arange(4)}), num_samples=2)
    pipeline = Pipeline(train_data=data, num_process=0, ops=[RemoveIf(fn=reject_the_first_1200_batches, inputs="x")])
    with pytest.warns(FEWarning, match="filtered out 1001 batches in a row .* still drawing replacements"):
        assert _epoch(pipeline) == [[0, 1], [2, 3]]
