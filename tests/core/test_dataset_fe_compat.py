"""Dataset behaviour FastEstimator users rely on: columns as lists, InterleaveDataset items as batches, and
FastEstimator's exception types for CombinedDataset and CSVDataset misuse."""
import numpy as np
import pytest

from fe_core.dataset import BatchDataset, CombinedDataset, CSVDataset, InMemoryDataset, InterleaveDataset, \
    NumpyDataset
from fe_core.pipeline.pipeline import Pipeline


def ids(count: int, start: int = 0) -> NumpyDataset:
    return NumpyDataset({"x": np.arange(start, start + count), "y": np.arange(start, start + count) % 3})


# ------------------------------------------------------------------------------------------ columns
def test_a_numpy_dataset_column_of_scalars_is_a_list():
    ds = NumpyDataset({"y": np.array([0, 1, 1, 2, 1]), "x": np.zeros((5, 2))})
    column = ds["y"]
    assert isinstance(column, list)
    assert column == [0, 1, 1, 2, 1] and column.count(1) == 3 and column.index(2) == 3
    array_column = ds["x"]  # per-sample arrays: one array, as FastEstimator returns, which the user may edit
    assert isinstance(array_column, np.ndarray) and array_column.shape == (5, 2)
    array_column += 1
    assert float(ds[0]["x"][0]) == 0.0  # the dataset is not changed behind its back


def test_string_columns_are_lists_of_strings():
    ds = NumpyDataset({"name": ["a", "b", "a"]})
    assert ds["name"] == ["a", "b", "a"] and ds["name"].count("a") == 2


def test_an_out_of_range_sample_index_is_an_index_error_and_a_key_error():
    for ds in (ids(3), InMemoryDataset({0: {"a": 1}, 1: {"a": 2}})):
        with pytest.raises(IndexError):
            ds[5]
        with pytest.raises(KeyError):  # FastEstimator's in-memory datasets look samples up in a dict
            ds[5]


# ------------------------------------------------------------------------------------------ InterleaveDataset
def test_interleave_items_are_batches_and_len_counts_batches():
    ds = InterleaveDataset({"a": ids(10), "b": ids(6, 100)}, pattern=["a", "a", "b"])
    assert len(ds) == 15 and all(isinstance(ds[i], list) and len(ds[i]) == 1 for i in range(len(ds)))
    ds.set_batch_sizes([2, 3])
    assert len(ds) == 6
    assert [[int(sample["x"]) for sample in ds[i]] for i in range(len(ds))] == [
        [0, 1], [2, 3], [100, 101, 102], [4, 5], [6, 7], [103, 104, 105]]
    with pytest.raises(IndexError):
        ds[6]
    with pytest.raises(StopIteration):  # what FastEstimator raises there
        ds[6]
    assert sum(1 for _ in ds) == 6  # iterating by index stops at the end


def test_interleave_summary_reports_every_key_and_one_instance_per_batch():
    ds = InterleaveDataset([NumpyDataset({"x": np.zeros(8), "a": np.arange(8)}),
                            NumpyDataset({"x": np.ones(8), "b": np.arange(8)})])
    ds.set_batch_sizes([2, 4])
    summary = ds.summary()
    assert summary.num_instances == len(ds) == 4 and set(summary.keys) == {"x", "a", "b"}


def test_interleave_reset_shuffles_which_samples_each_batch_takes():
    ds = InterleaveDataset([ids(8), ids(8, 100)])
    ds.set_batch_sizes([4, 4])
    np.random.seed(0)
    ds.fe_reset_ds(shuffle=True)
    first = sorted(int(s["x"]) for i in (0, 2) for s in ds[i])
    assert first == list(range(8))  # every sample once per epoch, in a shuffled order
    ds.fe_reset_ds(shuffle=False)
    assert [int(s["x"]) for s in ds[0]] == [0, 1, 2, 3]


def test_interleave_of_batch_datasets_unpacks_their_batches():
    batched = BatchDataset([ids(8)], num_samples=[2])
    ds = InterleaveDataset([batched, ids(4, 100)])
    assert len(ds[0]) == 2 and len(ds[1]) == 1


def test_the_pipeline_sets_interleave_batch_sizes_from_batch_ops():
    from fe_core.op.numpyop.batch import Batch
    ds = InterleaveDataset({"a": ids(8), "b": ids(9, 100)}, pattern=["a", "b"])
    pipeline = Pipeline(train_data=ds, ops=[Batch(batch_size=2, ds_id="a"), Batch(batch_size=3, ds_id="b")])
    with pipeline(mode="train", shuffle=False) as loader:
        sizes = [len(batch["x"]) for batch in loader]
    assert sizes == [2, 3, 2, 3, 2, 3] and len(ds) == 6 and len(ds[1]) == 3


# ------------------------------------------------------------------------------------------ CombinedDataset
def test_combined_dataset_errors_have_fastestimators_types():
    with pytest.raises(AssertionError):
        CombinedDataset([])
    with pytest.raises(AssertionError):
        CombinedDataset([ids(3)])
    with pytest.raises(KeyError):
        CombinedDataset([ids(3), NumpyDataset({"z": np.arange(3)})])
    with pytest.raises(AssertionError):
        CombinedDataset([ids(3), InterleaveDataset([ids(2), ids(2)])])
    combined = CombinedDataset([ids(3), ids(2, 10)])
    assert len(combined) == 5 and int(combined[3]["x"]) == 10 and int(combined[-1]["x"]) == 11
    with pytest.raises(IndexError):
        combined[5]
    with pytest.raises(ValueError):  # torch's ConcatDataset, which FastEstimator's extends, raises ValueError
        combined[-6]
    with pytest.raises(IndexError):
        combined[-6]


# ------------------------------------------------------------------------------------------ CSVDataset
@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("id,mode,score\n0,train,1.5\n1,,2.5\n2,eval,\n3,train,4.0\n")
    return str(path)


def test_csv_fill_na_none_keeps_empty_cells_as_none_and_include_if_none_selects_them(csv_file):
    ds = CSVDataset(csv_file, fill_na=None)
    assert ds[1]["mode"] is None and ds[2]["score"] is None
    empty = CSVDataset(csv_file, fill_na=None, include_if={"mode": None})
    assert [sample["id"] for sample in empty.data.values()] == [1]
    some = CSVDataset(csv_file, fill_na=None, include_if={"mode": [None, "eval"]})
    assert sorted(sample["id"] for sample in some.data.values()) == [1, 2]


def test_csv_include_if_function_keeps_rows_with_empty_cells(csv_file):
    ds = CSVDataset(csv_file, include_if=lambda mode: mode != "train")
    assert [sample["id"] for sample in ds.data.values()] == [1, 2]
    assert len(CSVDataset(csv_file, include_if="score > 2")) == 2
    assert [s["id"] for s in CSVDataset(csv_file, fill_na=0, include_if={"score": 0}).data.values()] == [2]


def test_csv_errors_have_fastestimators_types(csv_file):
    with pytest.raises(ValueError):
        CSVDataset(csv_file, include_if=lambda missing: True)
    with pytest.raises(KeyError):
        CSVDataset(csv_file, include_if=lambda missing: True)
    with pytest.raises(ValueError):
        CSVDataset(csv_file, include_if=3)
    with pytest.raises(KeyError):
        CSVDataset(csv_file, include_if={"missing": 1})
    ds = CSVDataset(csv_file)
    with pytest.raises(KeyError):
        ds[10]
    with pytest.raises(IndexError):
        ds[10]
    assert len(CSVDataset(csv_file, include_if={"mode": "test"})) == 0  # nothing matches: an empty dataset


def test_interleave_split_stratifies_only_the_datasets_with_the_key():
    labelled = NumpyDataset({"x": np.arange(20), "y": np.arange(20) % 2})
    unlabelled = NumpyDataset({"x": np.arange(100, 120)})
    ds = InterleaveDataset([labelled, unlabelled])
    part = ds.split(0.5, seed=1, stratify="y")
    assert len(part.datasets[0]) == 10 and len(part.datasets[1]) == 10
    assert sorted(part.datasets[0]["y"]).count(0) == 5
