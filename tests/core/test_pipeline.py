"""Pipeline: batching, ops per sample and per batch, scheduling, ds_ids, pruning, errors and helpers."""
from __future__ import annotations

import re
from typing import Any, Dict, List

import numpy as np
import pytest

from fe_core.framework import Backend, register_backend, unregister_backend
from fe_core.dataset import NumpyDataset
from fe_core.op.numpyop import Batch, Delete, FilteredData, LambdaOp, NumpyOp, RemoveIf
from fe_core.op.numpyop.univariate import ExpandDims, Minmax
from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler, RepeatScheduler


def indexed_dataset(n: int = 10) -> NumpyDataset:
    """x[i] is an image filled with i, y[i] == i: every batch can be checked for matching rows."""
    return NumpyDataset({"x": np.repeat(np.arange(n, dtype=np.uint8), 4).reshape(n, 2, 2), "y": np.arange(n)})


def epoch_batches(pipeline: Pipeline, mode: str = "train", **kwargs: Any) -> List[Dict[str, Any]]:
    with pipeline(mode=mode, **kwargs) as loader:
        return list(loader)


def labels(batches: List[Dict[str, Any]]) -> List[int]:
    return [int(v) for batch in batches for v in batch["y"]]


class CountingOp(NumpyOp):
    """Adds 1 to x, counting per-sample and per-batch calls."""

    def __init__(self, batch_capable: bool = True, **kwargs: Any) -> None:
        super().__init__(inputs="x", outputs="x", **kwargs)
        self.batch_capable = batch_capable
        self.sample_calls = 0
        self.batch_calls = 0

    def forward(self, data, state):
        self.sample_calls += 1
        return data + 1

    def forward_batch(self, data, state):
        self.batch_calls += 1
        return data + 1


class SpyDataset(NumpyDataset):
    """Counts how the Pipeline reads the data."""

    def __init__(self, data):
        super().__init__(data)
        self.getitem_calls = 0
        self.get_batch_calls = 0

    def __getitem__(self, index):
        self.getitem_calls += 1
        return super().__getitem__(index)

    def get_batch(self, indices, keys=None):
        self.get_batch_calls += 1
        return super().get_batch(indices, keys)


# ---------------------------------------------------------------------------------------------------------- batching
def test_batches_cover_the_data_once_with_a_partial_last_batch():
    batches = epoch_batches(Pipeline(eval_data=indexed_dataset(10), batch_size=4), mode="eval")
    assert [len(b["y"]) for b in batches] == [4, 4, 2]
    assert labels(batches) == list(range(10))
    assert batches[0]["x"].shape == (4, 2, 2)


def test_batch_op_drop_last_drops_the_partial_batch():
    pipeline = Pipeline(eval_data=indexed_dataset(10), ops=[Batch(batch_size=4, drop_last=True)])
    assert [len(b["y"]) for b in epoch_batches(pipeline, mode="eval")] == [4, 4]
    assert pipeline.get_num_steps("eval", 1) == 2


def test_batch_op_batch_size_takes_precedence_per_mode():
    pipeline = Pipeline(train_data=indexed_dataset(10), eval_data=indexed_dataset(10), batch_size=5,
                        ops=[Batch(batch_size=2, mode="eval")])
    assert len(epoch_batches(pipeline, "train")) == 2
    assert len(epoch_batches(pipeline, "eval")) == 5


def test_batch_size_per_mode_dict():
    pipeline = Pipeline(train_data=indexed_dataset(10), eval_data=indexed_dataset(10), batch_size={"train": 5,
                                                                                                     "eval": 10})
    assert len(epoch_batches(pipeline, "train")) == 2 and len(epoch_batches(pipeline, "eval")) == 1


def test_pad_value_pads_ragged_samples_to_the_largest_shape():
    ds = [{"seq": np.arange(length), "y": length} for length in (1, 3, 2)]
    pipeline = Pipeline(eval_data=ds, ops=[Batch(batch_size=3, pad_value=-1)])
    batch = pipeline.get_results(mode="eval")
    np.testing.assert_array_equal(batch["seq"], [[0, -1, -1], [0, 1, 2], [0, 1, -1]])


def test_ragged_samples_without_padding_fail_naming_the_key():
    ds = [{"seq": np.arange(length)} for length in (1, 3)]
    with pytest.raises(ValueError, match="key 'seq'.*different shapes"):
        Pipeline(eval_data=ds, batch_size=2).get_results(mode="eval")


def test_collate_fn_builds_the_batch():
    def collate(samples):
        return {"total": np.array([sum(int(s["y"]) for s in samples)])}

    pipeline = Pipeline(eval_data=indexed_dataset(6), ops=[Batch(batch_size=3, collate_fn=collate)])
    assert [int(b["total"][0]) for b in epoch_batches(pipeline, "eval")] == [3, 12]


def test_no_batch_size_yields_single_samples():
    samples = epoch_batches(Pipeline(eval_data=indexed_dataset(3), ops=[Minmax("x", "x")]), "eval")
    assert len(samples) == 3 and samples[0]["x"].shape == (2, 2) and samples[2]["y"] == 2


def test_any_map_style_dataset_of_dicts_works_and_is_not_modified():
    ds = [{"x": np.full((2,), float(i)), "y": i} for i in range(5)]
    pipeline = Pipeline(train_data=ds, batch_size=5, ops=[LambdaOp(fn=lambda x: x * 2, inputs="x", outputs="z")])
    batch = pipeline.get_results()
    np.testing.assert_array_equal(batch["z"][:, 0], [0, 2, 4, 6, 8])
    assert set(ds[0]) == {"x", "y"}


def test_datasets_that_do_not_return_dicts_are_refused():
    pipeline = Pipeline(train_data=np.zeros((4, 2)), batch_size=2)
    with pytest.raises(TypeError, match="must return a dict per sample"):
        pipeline.get_results()


# ---------------------------------------------------------------------------------------------------------- ops
def test_per_sample_ops_keep_rows_aligned_with_labels_under_shuffling():
    pipeline = Pipeline(train_data=indexed_dataset(50), batch_size=8,
                        ops=[LambdaOp(fn=lambda x: x.astype(np.int64) * 2, inputs="x", outputs="x")])
    for batch in epoch_batches(pipeline):
        np.testing.assert_array_equal(batch["x"][:, 0, 0], batch["y"] * 2)


def test_trailing_batch_capable_ops_run_once_per_batch():
    ds = SpyDataset({"x": np.zeros((10, 3)), "y": np.arange(10)})
    op = CountingOp()
    batches = epoch_batches(Pipeline(train_data=ds, batch_size=4, ops=[op]))
    assert (op.sample_calls, op.batch_calls) == (0, 3)
    assert (ds.getitem_calls, ds.get_batch_calls) == (0, 3)  # whole batches fetched with one call each
    assert all((b["x"] == 1).all() for b in batches)


def test_keys_untouched_by_per_sample_ops_are_gathered_per_batch():
    ds = SpyDataset({"x": np.zeros((10, 3)), "y": np.arange(10)})
    op = CountingOp(batch_capable=False)
    batches = epoch_batches(Pipeline(eval_data=ds, batch_size=4, ops=[op]), "eval")
    assert ds.getitem_calls == 10 and ds.get_batch_calls == 3  # x per sample, y with one call per batch
    assert labels(batches) == list(range(10)) and all((b["x"] == 1).all() for b in batches)


def test_only_the_trailing_run_before_batch_moves_to_the_batch_stage():
    first, blocker, last, after = CountingOp(), CountingOp(batch_capable=False), CountingOp(), CountingOp(False)
    pipeline = Pipeline(train_data=indexed_dataset(8), ops=[first, blocker, last, Batch(batch_size=4), after])
    batch = epoch_batches(pipeline)[0]
    assert (first.sample_calls, blocker.sample_calls, last.sample_calls) == (8, 8, 0)
    assert (last.batch_calls, after.batch_calls, after.sample_calls) == (2, 2, 0)
    np.testing.assert_array_equal(batch["x"][:, 0, 0], batch["y"] + 4)


def test_batch_capable_ops_run_per_sample_when_the_batch_pads():
    op = CountingOp()
    epoch_batches(Pipeline(train_data=indexed_dataset(6), ops=[op, Batch(batch_size=3, pad_value=0)]))
    assert (op.sample_calls, op.batch_calls) == (6, 0)


def test_batch_capable_pipeline_gives_the_same_batches_as_per_sample_ops():
    class SampleMinmax(Minmax):
        batch_capable = False

    class SampleExpand(ExpandDims):
        batch_capable = False

    ds = NumpyDataset({"x": np.random.default_rng(0).integers(0, 255, (30, 5, 5), dtype=np.uint8),
                       "y": np.arange(30)})
    fast = Pipeline(train_data=ds, batch_size=7, ops=[ExpandDims("x", "x"), Minmax("x", "x")])
    slow = Pipeline(train_data=ds, batch_size=7, ops=[SampleExpand("x", "x"), SampleMinmax("x", "x")])
    np.random.seed(3)
    expected = epoch_batches(slow)
    np.random.seed(3)
    got = epoch_batches(fast)
    assert len(got) == len(expected) == 5
    for a, b in zip(got, expected):
        assert a["x"].shape == b["x"].shape == (len(a["y"]), 5, 5, 1)
        np.testing.assert_array_equal(a["x"], b["x"])
        np.testing.assert_array_equal(a["y"], b["y"])


def test_ops_that_edit_samples_in_place_get_copies_and_leave_the_dataset_intact():
    class InPlace(NumpyOp):
        def forward(self, data, state):
            data += 1
            return data

    ds = NumpyDataset({"x": np.zeros((4, 2))})
    batch = Pipeline(train_data=ds, batch_size=4, ops=[InPlace(inputs="x", outputs="x")]).get_results()
    np.testing.assert_array_equal(batch["x"], np.ones((4, 2)))
    np.testing.assert_array_equal(ds.data["x"], np.zeros((4, 2)))


def test_delete_removes_keys():
    pipeline = Pipeline(train_data=indexed_dataset(4), batch_size=2,
                        ops=[LambdaOp(fn=lambda y: y + 1, inputs="y", outputs="z"), Delete("y")])
    assert set(pipeline.get_results()) == {"x", "z"}


def test_ops_are_selected_by_mode_and_ds_id():
    pipeline = Pipeline(train_data=indexed_dataset(4), eval_data={"a": indexed_dataset(4), "b": indexed_dataset(4)},
                        batch_size=4, ops=[LambdaOp(fn=lambda y: y, inputs="y", outputs="train_only", mode="train"),
                                           LambdaOp(fn=lambda y: y, inputs="y", outputs="not_b", ds_id="!b")])
    assert set(pipeline.get_results("train")) == {"x", "y", "train_only", "not_b"}
    assert set(pipeline.get_results("eval", ds_id="a")) == {"x", "y", "not_b"}
    assert set(pipeline.get_results("eval", ds_id="b")) == {"x", "y"}


# ---------------------------------------------------------------------------------------------------------- filtering
def test_remove_if_with_replacement_keeps_the_number_of_batches():
    pipeline = Pipeline(train_data=indexed_dataset(10), batch_size=4,
                        ops=[RemoveIf(fn=lambda y: y % 3 == 0, inputs="y")])
    np.random.seed(0)
    batches = epoch_batches(pipeline)
    assert [len(b["y"]) for b in batches] == [4, 4, 2]
    seen = labels(batches)
    assert not [y for y in seen if y % 3 == 0]
    assert set(seen) == {1, 2, 4, 5, 7, 8}  # every kept sample appears before any repeats


def test_remove_if_without_replacement_shortens_the_epoch():
    pipeline = Pipeline(eval_data=indexed_dataset(10), batch_size=4,
                        ops=[RemoveIf(fn=lambda y: y % 3 == 0, replacement=False, inputs="y")])
    batches = epoch_batches(pipeline, "eval")
    assert labels(batches) == [1, 2, 4, 5, 7, 8]
    assert [len(b["y"]) for b in batches] == [4, 2]


def test_any_op_may_return_filtered_data():
    class DropOdd(NumpyOp):
        def forward(self, data, state):
            return FilteredData(replacement=False) if data % 2 else data

    batches = epoch_batches(Pipeline(eval_data=indexed_dataset(6), batch_size=3,
                                     ops=[DropOdd(inputs="y", outputs="y")]), "eval")
    assert labels(batches) == [0, 2, 4]


def test_remove_if_after_batch_drops_whole_batches():
    pipeline = Pipeline(eval_data=indexed_dataset(9), ops=[Batch(batch_size=3),
                                                           RemoveIf(fn=lambda y: 4 in y, replacement=False, inputs="y")])
    assert labels(epoch_batches(pipeline, "eval")) == [0, 1, 2, 6, 7, 8]
    pipeline = Pipeline(eval_data=indexed_dataset(9), ops=[Batch(batch_size=3),  # replaced: drawn again, as in FE
                                                           RemoveIf(fn=lambda y: 4 in y, inputs="y")])
    assert labels(epoch_batches(pipeline, "eval")) == [0, 1, 2, 6, 7, 8, 0, 1, 2]


def test_filtering_every_sample_with_replacement_is_an_error():
    pipeline = Pipeline(train_data=indexed_dataset(5), batch_size=2, ops=[RemoveIf(fn=lambda y: True, inputs="y")])
    # FastEstimator keeps drawing replacements: only 20 passes (at least 1000 draws) rejected in a row are refused
    with pytest.raises(ValueError, match="filtered out 1000 samples in a row in mode 'train' epoch 1"):
        epoch_batches(pipeline)


# ---------------------------------------------------------------------------------------------------------- shuffling
def test_shuffles_in_train_mode_only_and_reproducibly_under_np_random_seed():
    ds = indexed_dataset(40)
    pipeline = Pipeline(train_data=ds, eval_data=ds, test_data=ds, batch_size=8)
    assert labels(epoch_batches(pipeline, "eval")) == list(range(40))
    assert labels(epoch_batches(pipeline, "test")) == list(range(40))
    np.random.seed(7)
    first = labels(epoch_batches(pipeline, "train"))
    np.random.seed(7)
    second = labels(epoch_batches(pipeline, "train"))
    assert first == second and first != list(range(40)) and sorted(first) == list(range(40))
    assert labels(epoch_batches(pipeline, "train", shuffle=False)) == list(range(40))
    assert labels(epoch_batches(pipeline, "eval", shuffle=True)) != list(range(40))


def test_per_sample_path_shuffles_reproducibly_too():
    pipeline = Pipeline(train_data=indexed_dataset(30), batch_size=4, ops=[CountingOp(batch_capable=False)])
    np.random.seed(1)
    first = labels(epoch_batches(pipeline))
    np.random.seed(1)
    assert labels(epoch_batches(pipeline)) == first and sorted(first) == list(range(30))


# ---------------------------------------------------------------------------------------------------------- steps
@pytest.mark.parametrize("ops", [[], [CountingOp(batch_capable=False)]], ids=["whole-batches", "per-sample"])
def test_steps_per_epoch_cuts_short_or_repeats_the_data(ops):
    pipeline = Pipeline(train_data=indexed_dataset(10), batch_size=4, ops=ops)
    short = epoch_batches(pipeline, steps_per_epoch=2)
    assert [len(b["y"]) for b in short] == [4, 4]
    long = epoch_batches(pipeline, steps_per_epoch=7)
    assert [len(b["y"]) for b in long] == [4] * 7
    seen = labels(long)
    assert sorted(seen[:10]) == list(range(10))  # the whole data once before any repeat
    assert sorted(seen[10:20]) == list(range(10))
    assert pipeline.get_num_steps("train", 1, steps_per_epoch=7) == 7


def test_epoch_scheduler_batch_sizes_change_the_number_of_batches():
    pipeline = Pipeline(train_data=indexed_dataset(40), batch_size=EpochScheduler({1: 10, 2: 20, 3: 8}))
    assert [len(epoch_batches(pipeline, epoch=e)) for e in (1, 2, 3, 4)] == [4, 2, 5, 5]
    assert [pipeline.get_num_steps("train", e) for e in (1, 2, 3)] == [4, 2, 5]


# ---------------------------------------------------------------------------------------------------------- scheduling
def test_scheduled_ops_switch_at_their_epoch():
    plus_one = LambdaOp(fn=lambda x: x + 1, inputs="y", outputs="y")
    times_ten = LambdaOp(fn=lambda x: x * 10, inputs="y", outputs="y")
    pipeline = Pipeline(eval_data=indexed_dataset(3), batch_size=3,
                        ops=[EpochScheduler({1: plus_one, 3: times_ten, 4: None})])
    results = [pipeline.get_results("eval", epoch=e)["y"].tolist() for e in (1, 2, 3, 4)]
    assert results == [[1, 2, 3], [1, 2, 3], [0, 10, 20], [0, 1, 2]]


def test_scheduled_batch_op_and_repeat_scheduler():
    pipeline = Pipeline(train_data=indexed_dataset(12),
                        ops=[RepeatScheduler([Batch(batch_size=6), Batch(batch_size=4)])])
    assert [len(epoch_batches(pipeline, epoch=e)) for e in (1, 2, 3)] == [2, 3, 2]


def test_two_batch_ops_in_force_are_refused():
    with pytest.raises(ValueError, match="2 Batch ops for mode 'train', epoch 1"):  # when built, as in FastEstimator
        Pipeline(train_data=indexed_dataset(4), ops=[Batch(batch_size=2), Batch(batch_size=3)])


def test_scheduled_datasets_and_modes():
    pipeline = Pipeline(train_data=indexed_dataset(4), eval_data=EpochScheduler({1: None, 2: indexed_dataset(2)}),
                        batch_size=2)
    assert pipeline.get_modes() == {"train", "eval"}
    assert pipeline.get_modes(epoch=1) == {"train"} and pipeline.get_modes(epoch=2) == {"train", "eval"}
    assert pipeline.get_ds_ids(epoch=1, mode="eval") == [] and pipeline.get_ds_ids(epoch=2, mode="eval") == [""]
    assert pipeline.get_epochs_with_data(total_epochs=3, mode="eval") == {2, 3}
    assert epoch_batches(pipeline, "eval", epoch=1) == []
    assert len(epoch_batches(pipeline, "eval", epoch=2)) == 1


def test_get_scheduled_items_lists_ops_batch_size_and_datasets():
    op = EpochScheduler({1: Minmax("x", "x"), 2: None})
    batch_size = EpochScheduler({1: 2, 3: 4})
    ds = indexed_dataset(2)
    items = Pipeline(train_data=ds, batch_size=batch_size, ops=[op]).get_scheduled_items("train")
    assert items[0] is op and items[1] is batch_size and items[2] is ds


# ---------------------------------------------------------------------------------------------------------- ds_ids
def test_ds_id_dicts_and_get_ds_ids():
    pipeline = Pipeline(train_data=indexed_dataset(4),
                        eval_data={"zeta": indexed_dataset(2), "alpha": indexed_dataset(6)}, batch_size=2)
    assert pipeline.get_ds_ids(epoch=1, mode="train") == [""]
    assert pipeline.get_ds_ids(epoch=1, mode="eval") == ["alpha", "zeta"]
    assert pipeline.get_ds_ids(epoch=1, mode="test") == []
    assert len(epoch_batches(pipeline, "eval", ds_id="alpha")) == 3
    assert pipeline.get_num_steps("eval", 1, "zeta") == 1
    with pytest.raises(KeyError, match="no dataset with ds_id '' in mode 'eval'.*alpha"):
        pipeline(mode="eval")
    with pytest.raises(KeyError, match="no data for mode 'test'"):
        pipeline(mode="test")


@pytest.mark.parametrize("ds_id", ["a|b", "!a", "", "a:b"])
def test_invalid_ds_ids_are_refused(ds_id):
    with pytest.raises(ValueError):
        Pipeline(eval_data={ds_id: indexed_dataset(2)})


# ---------------------------------------------------------------------------------------------------------- pruning
def test_output_keys_prune_keys_and_skip_ops_nobody_needs():
    needed, unneeded, side_effect = [], [], []
    pipeline = Pipeline(train_data=indexed_dataset(6), batch_size=3, ops=[
        LambdaOp(fn=lambda x: needed.append(1) or x, inputs="x", outputs="x2"),
        LambdaOp(fn=lambda y: unneeded.append(1) or y, inputs="y", outputs="y2"),
        LambdaOp(fn=lambda y: side_effect.append(1), inputs="y"),
        RemoveIf(fn=lambda y: y == 5, inputs="y", replacement=False)])
    batches = epoch_batches(pipeline, output_keys={"x2", "unknown"})
    assert all(set(batch) == {"x2"} for batch in batches)
    assert len(needed) == 6 and len(unneeded) == 0 and len(side_effect) == 6
    assert sum(len(batch["x2"]) for batch in batches) == 5  # the filter still ran


def test_output_keys_fetch_only_needed_keys_from_the_dataset():
    ds = SpyDataset({"x": np.zeros((4, 2)), "big": np.zeros((4, 100)), "y": np.arange(4)})
    fetched: List[List[str]] = []
    original = ds.get_batch

    def get_batch(indices, keys=None):
        fetched.append(sorted(ds.data) if keys is None else sorted(keys))
        return original(indices, keys)

    ds.get_batch = get_batch
    batches = epoch_batches(Pipeline(train_data=ds, batch_size=2, ops=[Minmax("x", "x")]), output_keys={"x"})
    assert fetched == [["x"], ["x"]] and set(batches[0]) == {"x"}


def test_output_keys_hold_for_whole_batches_without_ops():
    ds = NumpyDataset({"x": np.zeros((4, 2)), "big": np.zeros((4, 100)), "y": np.arange(4)})
    batches = epoch_batches(Pipeline(train_data=ds, batch_size=2), output_keys={"x", "y"})
    assert [sorted(batch) for batch in batches] == [["x", "y"], ["x", "y"]]


def test_output_keys_hold_for_a_dataset_whose_get_batch_ignores_keys():
    class AllKeys:
        """A map-style dataset whose get_batch returns every key whatever it is asked for."""

        def __init__(self):
            self.data = {"x": np.zeros((4, 2)), "big": np.zeros((4, 100)), "y": np.arange(4)}

        def __len__(self):
            return 4

        def __getitem__(self, index):
            return {key: value[index] for key, value in self.data.items()}

        def get_batch(self, indices, keys=None):
            return {key: value[indices] for key, value in self.data.items()}

    batches = epoch_batches(Pipeline(train_data=AllKeys(), batch_size=2), output_keys={"x", "y"})
    assert [sorted(batch) for batch in batches] == [["x", "y"], ["x", "y"]]


def test_output_keys_hold_for_a_numpy_dataset_subclass_whose_get_batch_adds_keys():
    class WithIndex(NumpyDataset):
        def get_batch(self, indices, keys=None):
            return dict(super().get_batch(indices, keys), index=np.asarray(indices))

    ds = WithIndex({"x": np.zeros((4, 2)), "y": np.arange(4)})
    batches = epoch_batches(Pipeline(train_data=ds, batch_size=2), output_keys={"x", "y"})
    assert [sorted(batch) for batch in batches] == [["x", "y"], ["x", "y"]]


# ---------------------------------------------------------------------------------------------------------- errors
def test_missing_key_error_names_op_mode_epoch_ds_id_and_available_keys():
    pipeline = Pipeline(train_data=indexed_dataset(4), batch_size=2,
                        ops=[LambdaOp(fn=lambda x: x, inputs="x2", outputs="z")])
    with pytest.raises(KeyError, match=re.escape("LambdaOp in mode 'train' epoch 1 ds_id '' reads key 'x2' which is "
                                                 "not available (available: ['x', 'y'])")):
        epoch_batches(pipeline)


def test_missing_key_after_batch_is_reported_with_earlier_outputs_available():
    pipeline = Pipeline(eval_data={"d1": indexed_dataset(4)}, ops=[
        LambdaOp(fn=lambda x: x, inputs="x", outputs="z"), Batch(batch_size=2), Minmax("nope", "nope")])
    with pytest.raises(KeyError, match=re.escape("Minmax in mode 'eval' epoch 1 ds_id 'd1' reads key 'nope' which "
                                                 "is not available (available: ['x', 'y', 'z'])")):
        epoch_batches(pipeline, "eval", ds_id="d1")


def test_invalid_arguments_are_refused():
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        Pipeline(train_data=indexed_dataset(2), batch_size=0)
    with pytest.raises(ValueError, match=r"batch_size\['train'\]"):
        Pipeline(train_data=indexed_dataset(2), batch_size={"train": 1.5})
    with pytest.raises(ValueError, match="batch_size keys must be modes"):
        Pipeline(train_data=indexed_dataset(2), batch_size={"training": 2})
    with pytest.raises(TypeError, match="must be NumpyOps.*TensorOp at position 1"):
        Pipeline(train_data=indexed_dataset(2), ops=[Minmax("x", "x"), TensorOp(inputs="x", outputs="x")])
    with pytest.raises(ValueError, match="num_process"):
        Pipeline(train_data=indexed_dataset(2), num_process=-1)
    with pytest.raises(TypeError, match="not a dataset"):
        Pipeline(train_data=5)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        Pipeline(train_data=indexed_dataset(2))(mode="train", steps_per_epoch=0)


def test_num_process_is_accepted():
    pipeline = Pipeline(train_data=indexed_dataset(4), batch_size=2, num_process=4)
    assert pipeline.num_process == 4 and len(epoch_batches(pipeline)) == 2


def test_op_errors_say_which_op_and_where():
    pipeline = Pipeline(train_data=indexed_dataset(4), batch_size=2,
                        ops=[LambdaOp(fn=lambda x: 1 / 0, inputs="x", outputs="x")])
    with pytest.raises(ZeroDivisionError) as info:
        epoch_batches(pipeline)
    notes = getattr(info.value, "__notes__", None)
    if notes is not None:  # Python 3.11+
        assert "LambdaOp" in notes[0] and "mode 'train' epoch 1" in notes[0]


# ---------------------------------------------------------------------------------------------------------- helpers
def test_get_results_returns_one_batch_or_a_list():
    pipeline = Pipeline(eval_data=indexed_dataset(10), batch_size=4)
    one = pipeline.get_results(mode="eval")
    assert isinstance(one, dict) and one["y"].tolist() == [0, 1, 2, 3]
    several = pipeline.get_results(mode="eval", num_steps=2)
    assert isinstance(several, list) and [b["y"].tolist() for b in several] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_transform_runs_the_ops_on_one_sample_and_adds_a_batch_axis():
    pipeline = Pipeline(train_data=indexed_dataset(4), batch_size=2, ops=[
        ExpandDims("x", "x"), Minmax("x", "x"), LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x", mode="train"),
        Batch(), LambdaOp(fn=lambda x: x.shape[0], inputs="x", outputs="n")])
    image = np.arange(4, dtype=np.uint8).reshape(2, 2)
    out = pipeline.transform({"x": image}, mode="infer")
    assert out["x"].shape == (1, 2, 2, 1) and out["x"].dtype == np.float32
    np.testing.assert_allclose(out["x"][0, :, :, 0], [[0, 1 / 3], [2 / 3, 1]], rtol=1e-6)
    assert out["n"] == 1
    assert pipeline.transform({"x": image}, mode="train")["x"].max() == pytest.approx(2.0)
    np.testing.assert_array_equal(image, [[0, 1], [2, 3]])  # the input is not modified
    filtered = Pipeline(ops=[RemoveIf(fn=lambda x: True, inputs="x")]).transform({"x": image}, mode="infer")
    assert isinstance(filtered, FilteredData)


def test_benchmark_prints_speed_and_a_per_op_table(capsys):
    pipeline = Pipeline(train_data=indexed_dataset(64), batch_size=8,
                        ops=[LambdaOp(fn=lambda x: x, inputs="x", outputs="x"), ExpandDims("x", "x"),
                             Minmax("x", "x")])
    results = pipeline.benchmark(num_steps=20, log_interval=10)
    out = capsys.readouterr().out
    assert out.count("FastEstimator-Benchmark (Train): Step: ") == 2
    assert "Steps/sec: " in out and "Samples/sec: " in out
    assert "Breakdown of time taken by Pipeline Operations (Mode: Train, Epoch: 1; 2 batch-capable op(s)" in out
    table = out[out.index("Breakdown"):]
    for row in ("<Fetch sample>", "LambdaOp", "<Collate>", "ExpandDims", "Minmax", "<Loop overhead>"):
        assert row in table
    minmax_row = next(line for line in table.splitlines() if line.startswith("Minmax"))
    assert " batch " in minmax_row and " 10 " in minmax_row  # 10 batches, run once per batch
    assert results[""]["samples_per_sec"] == pytest.approx(8 * results[""]["steps_per_sec"])


def test_benchmark_covers_every_ds_id_by_default(capsys):
    pipeline = Pipeline(eval_data={"a": indexed_dataset(8), "b": indexed_dataset(8)}, batch_size=4)
    results = pipeline.benchmark(mode="eval", num_steps=4, log_interval=2, detailed=False)
    out = capsys.readouterr().out
    assert set(results) == {"a", "b"} and "Dataset: a, Step: 2" in out and "Dataset: b, Step: 4" in out
    assert "Breakdown" not in out


# ---------------------------------------------------------------------------------------------------------- native
class FakeLoader:
    """Stands for a framework loader: already batched, iterable, no __getitem__."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


class FakeBackend(Backend):
    name = "fake"

    def is_native_dataset(self, dataset):
        return isinstance(dataset, FakeLoader)


def test_native_loaders_are_iterated_as_is():
    loader = FakeLoader([{"x": np.zeros(3)}, {"x": np.ones(3)}])
    register_backend("fake", FakeBackend())
    try:
        pipeline = Pipeline(train_data=loader)
        batches = epoch_batches(pipeline)
        assert [b["x"].tolist() for b in batches] == [[0, 0, 0], [1, 1, 1]]
        with pipeline(mode="train", steps_per_epoch=5) as given:  # user code gets the loader itself, as in FE
            assert given is loader
        with pipeline(mode="train", steps_per_epoch=5).as_numpy() as batches:  # the Estimator's path repeats it
            assert len(list(batches)) == 5
        assert pipeline.get_num_steps("train", 1) == 2
        assert pipeline.get_loader("train") is loader
        with pytest.raises(AssertionError, match="batch_size, ops only apply to fe datasets"):  # as in FastEstimator
            Pipeline(train_data=loader, batch_size=2, ops=[LambdaOp(fn=lambda x: x + 5, inputs="x", outputs="x")])
    finally:
        unregister_backend("fake")


def test_unrecognised_loaders_are_refused_with_a_hint():
    pipeline = Pipeline(train_data=FakeLoader([{"x": np.zeros(3)}]))
    with pytest.raises(TypeError, match="no loaded backend recognises it"):
        pipeline(mode="train")
