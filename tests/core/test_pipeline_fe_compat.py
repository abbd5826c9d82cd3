"""Pipeline behaviour FastEstimator users rely on: the context manager, get_loader, mode errors, Batch op rules,
datasets whose items are whole batches, and filtering (RemoveIf) on them."""
import numpy as np
import pytest

from fe_core.dataset import BatchDataset, NumpyDataset
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.lambda_op import LambdaOp
from fe_core.op.numpyop.remove_if import RemoveIf
from fe_core.pipeline.pipeline import Pipeline
from fe_core.schedule.scheduler import EpochScheduler, RepeatScheduler


def ids(count: int, start: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(start, start + count, dtype=np.float32).reshape(count, 1),
                         "y": np.arange(start, start + count)})


class ListBatches:
    """A user's dataset whose items are lists of sample dicts (pre-batched)."""

    def __init__(self, batches: int, per_batch: int) -> None:
        self.batches, self.per_batch = batches, per_batch
        self.reads = 0

    def __len__(self) -> int:
        return self.batches

    def __getitem__(self, index: int):
        self.reads += 1
        return [{"x": np.full(2, index * 10 + k, dtype=np.float32), "y": index * 10 + k}
                for k in range(self.per_batch)]


# ------------------------------------------------------------------------------------------ context manager
def test_with_pipeline_as_loader_uses_fastestimators_defaults():
    pipeline = Pipeline(train_data=ids(10), eval_data=ids(4, 100), batch_size=4)
    with pipeline as loader:  # mode 'train', epoch 1
        sizes = [len(batch["y"]) for batch in loader]
    assert sizes == [4, 4, 2]
    pipeline(mode="eval")  # as in FastEstimator, a call sets what the next `with pipeline` gives
    with pipeline as loader:
        assert sorted(int(y) for batch in loader for y in batch["y"]) == [100, 101, 102, 103]


def test_nested_pipeline_contexts_raise_value_error():
    pipeline = Pipeline(train_data=ids(8), eval_data=ids(4), batch_size=2)
    with pipeline(mode="train"):
        with pytest.raises(ValueError, match="active loader"):
            pipeline(mode="eval")
        with pytest.raises(ValueError, match="active loader"):
            with pipeline:
                pass
    context = pipeline(mode="eval")  # never entered: nothing is held
    with pipeline(mode="train") as loader:
        with pytest.raises(ValueError, match="closing its other loader"):
            with context:
                pass
        assert len(list(loader)) == 4
    with pipeline as loader:  # the earlier contexts were released, also after the error
        assert len(list(loader)) == 4


def test_a_context_is_released_when_its_body_raises():
    pipeline = Pipeline(train_data=ids(4), batch_size=2)
    with pytest.raises(RuntimeError):
        with pipeline(mode="train"):
            raise RuntimeError("user code failed")
    with pipeline(mode="train") as loader:
        assert len(list(loader)) == 2


def test_get_loader_of_an_fe_dataset_iterates_batches():
    pipeline = Pipeline(train_data=ids(6), batch_size=4)
    loader = pipeline.get_loader("train", shuffle=False)
    assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [4, 5]]
    assert pipeline.get_loader(mode="train", epoch=2) is not None


# ------------------------------------------------------------------------------------------ mode errors
def test_get_epochs_with_data_raises_key_error_for_a_mode_without_data():
    pipeline = Pipeline(train_data=ids(4), eval_data=EpochScheduler({1: None, 3: ids(2)}), batch_size=2)
    assert pipeline.get_epochs_with_data(total_epochs=4, mode="train") == {1, 2, 3, 4}
    assert pipeline.get_epochs_with_data(total_epochs=4, mode="eval") == {3, 4}
    with pytest.raises(KeyError):
        pipeline.get_epochs_with_data(total_epochs=4, mode="test")


# ------------------------------------------------------------------------------------------ Batch op rules
def test_two_batch_ops_for_one_mode_and_ds_id_are_refused_as_assertion_error():
    with pytest.raises(AssertionError, match="at most 1 Batch op"):
        Pipeline(train_data=ids(4), ops=[Batch(batch_size=2), Batch(batch_size=3)])
    with pytest.raises(ValueError):  # also a ValueError (fe's own error type)
        Pipeline(train_data=ids(4), ops=[Batch(batch_size=2), Batch(batch_size=3, mode="train")])


def test_scheduled_batch_ops_are_refused_only_where_two_apply():
    with pytest.raises(AssertionError, match="epoch 3"):
        Pipeline(train_data=ids(4), ops=[Batch(batch_size=2), EpochScheduler({1: None, 3: Batch(batch_size=3)})])
    with pytest.raises(AssertionError, match="epoch 2"):
        Pipeline(train_data=ids(4), ops=[Batch(batch_size=2), RepeatScheduler([None, Batch(batch_size=3)])])
    pipeline = Pipeline(train_data=ids(4), eval_data=ids(4), ops=[
        Batch(batch_size=2, mode="train"), Batch(batch_size=1, mode="eval"),
        EpochScheduler({1: Batch(batch_size=3, mode="test"), 2: None})])
    with pipeline(mode="eval") as loader:
        assert [len(batch["y"]) for batch in loader] == [1, 1, 1, 1]


def test_batch_ops_for_different_ds_ids_are_accepted():
    pipeline = Pipeline(train_data={"a": ids(4), "b": ids(6)},
                        ops=[Batch(batch_size=2, ds_id="a"), Batch(batch_size=3, ds_id="b")])
    with pipeline(mode="train", ds_id="b") as loader:
        assert [len(batch["y"]) for batch in loader] == [3, 3]
    with pytest.raises(AssertionError, match="ds_id 'a'"):
        Pipeline(train_data={"a": ids(4), "b": ids(6)}, ops=[Batch(batch_size=2, ds_id="a"), Batch(batch_size=3)])


# ------------------------------------------------------------------------------------------ pre-batched datasets
def test_a_dataset_of_sample_lists_is_batched_per_item():
    data = ListBatches(batches=3, per_batch=2)
    pipeline = Pipeline(train_data=data, batch_size=5,  # the items decide the batch, not batch_size
                        ops=[LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")])
    with pipeline(mode="train", shuffle=False) as loader:
        batches = list(loader)
    assert [batch["y"].tolist() for batch in batches] == [[0, 1], [10, 11], [20, 21]]
    assert batches[1]["x"].tolist() == [[11, 11], [12, 12]]  # per-sample ops ran on every sample
    assert pipeline.get_num_steps("train", 1) == 3


def test_pre_batched_items_go_through_a_batch_op_and_batch_ops_after_it():
    pipeline = Pipeline(train_data=ListBatches(batches=2, per_batch=3),
                        ops=[Batch(pad_value=0), LambdaOp(fn=lambda y: y * 2, inputs="y", outputs="y")])
    with pipeline(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 2, 4], [20, 22, 24]]


def test_peeking_at_a_user_dataset_does_not_shift_the_random_stream():
    class RandomSamples:
        def __len__(self):
            return 4

        def __getitem__(self, index):
            return {"x": np.random.uniform(size=2)}

    np.random.seed(3)
    expected = np.random.uniform(size=2)
    np.random.seed(3)
    pipeline = Pipeline(train_data=RandomSamples(), batch_size=2)
    pipeline(mode="train", shuffle=False)
    assert np.array_equal(np.random.uniform(size=2), expected)


def test_batch_dataset_of_disjoint_datasets_merges_samples():
    left = NumpyDataset({"a": np.arange(4)})
    right = NumpyDataset({"b": np.arange(10, 14)})
    pipeline = Pipeline(train_data=BatchDataset([left, right], num_samples=[2, 2]))
    batch = pipeline.get_results(mode="train")
    assert set(batch) == {"a", "b"} and len(batch["a"]) == 2 and len(batch["b"]) == 2


# ------------------------------------------------------------------------------------------ filtering
def batch_ids(batches: int, per_batch: int = 2) -> BatchDataset:
    return BatchDataset([ids(batches * per_batch)], num_samples=[per_batch])


def test_remove_if_on_a_batch_dataset_removes_the_whole_batch_and_replaces_it():
    pipeline = Pipeline(train_data=batch_ids(5), ops=[RemoveIf(fn=lambda y: y == 3, inputs="y")])
    with pipeline(mode="train", shuffle=False) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    assert [len(batch) for batch in batches] == [2] * 5  # batch sizes kept, the epoch keeps its length
    assert all(3 not in batch and 2 not in batch for batch in batches[:4])  # [2, 3] went as a whole
    assert batches[:4] == [[0, 1], [4, 5], [6, 7], [8, 9]] and batches[4] == [0, 1]  # replaced from the next pass


def test_remove_if_without_replacement_on_a_batch_dataset_shortens_the_epoch():
    pipeline = Pipeline(train_data=batch_ids(5), ops=[RemoveIf(fn=lambda y: y in (3, 8), replacement=False,
                                                               inputs="y")])
    with pipeline(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1], [4, 5], [6, 7]]
    with pipeline(mode="train", shuffle=False, steps_per_epoch=4) as loader:  # 4 draws, 1 of them removed
        assert [batch["y"].tolist() for batch in loader] == [[0, 1], [4, 5], [6, 7]]


def test_a_batch_op_filter_on_a_batch_dataset_follows_replacement():
    def ops(replacement):
        return [Batch(), RemoveIf(fn=lambda y: bool((y == 4).any()), replacement=replacement, inputs="y")]

    with Pipeline(train_data=batch_ids(3), ops=ops(True))(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1], [2, 3], [0, 1]]
    with Pipeline(train_data=batch_ids(3), ops=ops(False))(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1], [2, 3]]


def test_a_filtered_data_from_any_op_removes_a_pre_batched_item():
    from fe_core.op.numpyop.numpyop import NumpyOp
    from fe_core.op.numpyop.remove_if import FilteredData

    class DropOdd(NumpyOp):
        def forward(self, data, state):
            return FilteredData(replacement=False) if data % 20 >= 10 else data

    data = ListBatches(batches=4, per_batch=2)  # y: [0, 1], [10, 11], [20, 21], [30, 31]
    pipeline = Pipeline(train_data=data, ops=[DropOdd(inputs="y", outputs="y")])
    with pipeline(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1], [20, 21]]


def test_steps_per_epoch_counts_draws_before_filtering_without_replacement():
    remove = RemoveIf(fn=lambda y: y in (1, 6), replacement=False, inputs="y")
    pipeline = Pipeline(train_data=ids(12), batch_size=4, ops=[remove])
    with pipeline(mode="train", shuffle=False, steps_per_epoch=3) as loader:  # 12 draws, 2 removed: 10 samples
        assert [batch["y"].tolist() for batch in loader] == [[0, 2, 3, 4], [5, 7, 8, 9], [10, 11]]
    with pipeline(mode="train", shuffle=False, steps_per_epoch=2) as loader:  # 8 draws, 2 removed
        assert [batch["y"].tolist() for batch in loader] == [[0, 2, 3, 4], [5, 7]]
    with pipeline(mode="train", shuffle=False) as loader:  # one pass: 10 samples
        assert [len(batch["y"]) for batch in loader] == [4, 4, 2]


def test_steps_per_epoch_with_replacement_keeps_every_step_full():
    pipeline = Pipeline(train_data=ids(12), batch_size=4, ops=[RemoveIf(fn=lambda y: y in (1, 6), inputs="y")])
    with pipeline(mode="train", shuffle=False, steps_per_epoch=3) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    # as in FastEstimator, the kept [5, 7] of a partial batch wait behind the next full batch [8, 9, 10, 11]
    assert batches == [[0, 2, 3, 4], [8, 9, 10, 11], [5, 7, 0, 2]]


def test_steps_per_epoch_without_replacement_and_drop_last_drops_the_short_batch():
    ops = [RemoveIf(fn=lambda y: y == 1, replacement=False, inputs="y"), Batch(batch_size=4, drop_last=True)]
    with Pipeline(train_data=ids(12), ops=ops)(mode="train", shuffle=False, steps_per_epoch=2) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 2, 3, 4]]


def test_unbatched_steps_per_epoch_counts_removed_samples():
    pipeline = Pipeline(train_data=ids(6), ops=[RemoveIf(fn=lambda y: y == 2, replacement=False, inputs="y")])
    with pipeline(mode="train", shuffle=False, steps_per_epoch=4) as loader:
        assert [int(sample["y"]) for sample in loader] == [0, 1, 3]


def test_interleave_filtering_with_replacement_keeps_steps_and_member_batch_sizes():
    from fe_core.dataset import InterleaveDataset
    ds = InterleaveDataset({"a": ids(8), "b": ids(12, 100)}, pattern=["a", "b"])
    pipeline = Pipeline(train_data=ds, ops=[RemoveIf(fn=lambda y: y in (1, 101), inputs="y"),
                                            Batch(batch_size=2, ds_id="a"), Batch(batch_size=3, ds_id="b")])
    with pipeline(mode="train", shuffle=False) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    assert [len(batch) for batch in batches] == [2, 3] * 4
    assert all(1 not in batch and 101 not in batch for batch in batches)
    # as FastEstimator documents, a pattern-worth of steps goes with each filtered sample (a's [0, 1] with b's
    # [100, 101, 102]); with replacement the steps go on into the next pass
    assert batches == [[2, 3], [103, 104, 105], [4, 5], [106, 107, 108], [6, 7], [109, 110, 111], [2, 3],
                       [103, 104, 105]]


def test_interleave_filtering_without_replacement_drops_a_pattern_worth_of_steps():
    from fe_core.dataset import InterleaveDataset
    ds = InterleaveDataset({"a": ids(8), "b": ids(8, 100)}, pattern=["a", "b"])
    pipeline = Pipeline(train_data=ds, ops=[RemoveIf(fn=lambda y: y in (1, 5), replacement=False, inputs="y"),
                                            Batch(batch_size=2)])
    with pipeline(mode="train", shuffle=False) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    # a's batches [0, 1] and [4, 5] hold filtered samples: each goes with the next step (b's), as FastEstimator
    # documents ("an entire pattern-worth of data will be dropped"); the dropped steps count in the epoch
    assert batches == [[2, 3], [102, 103], [6, 7], [106, 107]]


def test_interleave_of_batch_datasets_removes_whole_member_batches():
    from fe_core.dataset import InterleaveDataset
    ds = InterleaveDataset({"a": batch_ids(3), "b": ids(6, 100)})
    pipeline = Pipeline(train_data=ds, ops=[RemoveIf(fn=lambda y: y == 2, replacement=False, inputs="y"),
                                            Batch(batch_size=2, ds_id="b")])
    with pipeline(mode="train", shuffle=False) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    assert batches == [[0, 1], [100, 101], [4, 5], [104, 105]]  # a's [2, 3] goes with b's [102, 103]


def test_interleave_of_a_batch_dataset_gives_one_of_its_batches_per_step_whatever_the_batch_size():
    from fe_core.dataset import InterleaveDataset
    ds = InterleaveDataset([batch_ids(3, per_batch=2), ids(12, 100)])
    pipeline = Pipeline(train_data=ds, batch_size=4)
    with pipeline(mode="train", shuffle=False) as loader:
        sizes = [len(batch["y"]) for batch in loader]
    assert sizes == [2, 4, 2, 4, 2, 4] and len(ds) == 6 and pipeline.get_num_steps("train", 1) == 6
    assert len(ds[0]) == 2 and len(ds[1]) == 4


def test_a_batch_op_filter_with_replacement_keeps_the_epoch_length():
    ops = [Batch(batch_size=4), RemoveIf(fn=lambda y: bool((y == 5).any()), inputs="y")]
    with Pipeline(train_data=ids(10), ops=ops)(mode="train", shuffle=False) as loader:
        batches = [batch["y"].tolist() for batch in loader]
    assert batches == [[0, 1, 2, 3], [8, 9, 0, 1], [2, 3]]  # 10 samples, the removed batch drawn again


def test_a_batch_op_filter_without_replacement_counts_toward_the_epoch_and_steps():
    ops = [Batch(batch_size=4), RemoveIf(fn=lambda y: bool((y == 5).any()), replacement=False, inputs="y")]
    pipeline = Pipeline(train_data=ids(10), ops=ops)
    with pipeline(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [8, 9]]
    with pipeline(mode="train", shuffle=False, steps_per_epoch=3) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [8, 9, 0, 1]]


def test_batch_op_filters_behave_alike_with_per_sample_ops():
    plus_one = LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")  # forces the per-sample path
    replaced = [plus_one, Batch(batch_size=4), RemoveIf(fn=lambda y: bool((y == 5).any()), inputs="y")]
    with Pipeline(train_data=ids(10), ops=replaced)(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [8, 9, 0, 1], [2, 3]]
    removed = [plus_one, Batch(batch_size=4), RemoveIf(fn=lambda y: bool((y == 5).any()), replacement=False,
                                                       inputs="y")]
    pipeline = Pipeline(train_data=ids(10), ops=removed)
    with pipeline(mode="train", shuffle=False) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [8, 9]]
    with pipeline(mode="train", shuffle=False, steps_per_epoch=3) as loader:
        assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3], [8, 9, 0, 1]]


def test_get_loader_takes_fastestimators_positional_order():
    pipeline = Pipeline(train_data=ids(6), batch_size=6)
    loader = pipeline.get_loader("train", 1, False)  # (mode, epoch, shuffle) as in FastEstimator
    assert [batch["y"].tolist() for batch in loader] == [[0, 1, 2, 3, 4, 5]]
