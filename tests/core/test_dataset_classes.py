"""The dataset classes: split, summary, column access, the file-backed datasets and the combining datasets."""
from __future__ import annotations

import os

import numpy as np
import pytest

from fe_core.dataset import (BatchDataset, CombinedDataset, CSVDataset, DatasetArgumentError, DirDataset,
                             ExtendDataset, FEDataLoader, GeneratorDataset, InfiniteSampler, InterleaveDataset,
                             LabeledDirDataset, NumpyDataset, OpDataset, PickleDataset, SiameseDirDataset)
from fe_core.dataset.dataset import DatasetSummary, InMemoryDataset
from fe_core.op.numpyop import LambdaOp
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.remove_if import RemoveIf
from fe_core.pipeline import Pipeline


def make_tree(root, layout):
    """Create empty files: layout is {relative_path: bytes}."""
    for relative, content in layout.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as stream:
            stream.write(content)
    return str(root)


# ---------------------------------------------------------------------- split and summary
def test_split_by_fraction_count_and_indices_follows_fastestimator_arithmetic():
    ds = NumpyDataset({"x": np.arange(1000)})
    ds2 = ds.split(0.1, seed=1)
    assert (len(ds), len(ds2)) == (900, 100)
    ds3, ds4 = ds.split(0.1, 0.2, seed=1)
    assert (len(ds), len(ds3), len(ds4)) == (630, 90, 180)
    ds5 = ds.split([87, 2, 3, 100, 121, 158])
    assert len(ds) == 624 and len(ds5) == 6
    ds6 = ds.split(range(100))
    assert len(ds) == 524 and len(ds6) == 100
    everything = np.concatenate([part["x"] for part in (ds, ds2, ds3, ds4, ds5, ds6)])
    assert sorted(everything.tolist()) == list(range(1000))


def test_split_errors_are_value_and_assertion_errors():
    ds = NumpyDataset({"x": np.arange(10)})
    for bad in ((1.5,), (0,), ([0, 0],), ([11],), ("a",)):
        with pytest.raises(AssertionError):
            ds.split(*bad)
        with pytest.raises(ValueError):
            ds.split(*bad)
    with pytest.raises(DatasetArgumentError, match="stratify cannot be combined"):
        ds.split([1, 2], stratify="x")


def test_stratified_split_keeps_class_ratios():
    labels = np.array([0] * 80 + [1] * 20)
    ds = NumpyDataset({"x": np.arange(100), "y": labels})
    held = ds.split(0.25, seed=3, stratify="y")
    assert np.bincount(held["y"]).tolist() == [20, 5]
    assert np.bincount(ds["y"]).tolist() == [60, 15]
    with pytest.raises(DatasetArgumentError, match="stratify key 'z'"):
        ds.split(0.1, stratify="z")


def test_split_without_seed_draws_from_numpy_global_state():
    np.random.seed(5)
    first = NumpyDataset({"x": np.arange(50)}).split(10)["x"]
    np.random.seed(5)
    assert NumpyDataset({"x": np.arange(50)}).split(10)["x"] == first


def test_numpy_dataset_column_access_and_assignment():
    ds = NumpyDataset({"x": np.arange(6).reshape(3, 2), "y": [0, 1, 0]})
    np.testing.assert_array_equal(ds["x"], [[0, 1], [2, 3], [4, 5]])
    ds["z"] = [5, 6, 7]
    assert int(ds[2]["z"]) == 7
    with pytest.raises(ValueError, match="needs 3 values"):
        ds["w"] = [1]
    with pytest.raises(KeyError, match="no key 'nope'"):
        ds["nope"]
    summary = ds.summary()
    assert isinstance(summary, DatasetSummary) and summary.num_instances == 3
    assert summary.keys["x"].shape == [2] and summary.keys["y"].num_unique_values == 2
    assert "num_instances: 3" in str(ds)


def test_in_memory_dataset_column_and_split_keep_subclass_configuration():
    ds = InMemoryDataset({i: {"a": i, "b": f"s{i}", "v": np.full(2, i)} for i in range(10)})
    assert ds["a"] == list(range(10))  # a list, as FastEstimator returns for non-array values
    assert isinstance(ds["v"], np.ndarray) and ds["v"].shape == (10, 2)
    assert ds["b"][:2] == ["s0", "s1"]
    part = ds.split([0, 5])
    assert [sample["a"] for sample in part.data.values()] == [0, 5]
    assert len(ds) == 8 and ds[0]["a"] == 1 and ds[4]["a"] == 6
    summary = ds.summary()
    assert summary.keys["a"].dtype == "int" and summary.keys["a"].num_unique_values == 8


# ---------------------------------------------------------------------- file datasets
def test_csv_dataset_filters_fills_and_exposes_parent_path(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("image,mode,type,score\na.png,train,0,1.5\nb.png,eval,1,\nc.png,train,2,3.0\nd.png,train,5,4\n")
    ds = CSVDataset(str(path), include_if={"mode": "train", "type": [0, 1, 2]})
    assert [ds[i]["image"] for i in range(len(ds))] == ["a.png", "c.png"]
    assert ds.parent_path == str(tmp_path)
    assert len(CSVDataset(str(path), include_if="type >= 1")) == 3
    assert len(CSVDataset(str(path), include_if=lambda mode: mode == "eval")) == 1
    filled = CSVDataset(str(path), fill_na=-1)
    assert filled[1]["score"] == -1
    assert np.isnan(CSVDataset(str(path))[1]["score"])
    with pytest.raises(KeyError, match="'missing'"):
        CSVDataset(str(path), include_if={"missing": 1})


def test_pickle_dataset_reads_a_pickled_dataframe(tmp_path):
    import pandas as pd
    path = str(tmp_path / "rows.pkl")
    pd.DataFrame({"image": ["a", "b"], "label": [[1, 2], [3]]}).to_pickle(path)
    ds = PickleDataset(path)
    assert len(ds) == 2 and ds[1]["label"] == [3] and ds.parent_path == str(tmp_path)
    pd.Series([1, 2]).to_pickle(path)
    with pytest.raises(TypeError, match="DataFrame"):
        PickleDataset(path)


def test_dir_and_labeled_dir_datasets_list_files_as_fastestimator_does(tmp_path):
    root = make_tree(tmp_path, {"cat/img10.png": b"", "cat/img2.png": b"", "dog/sub/img1.png": b"", "dog/a.png": b"",
                                "dog/notes.txt": b"", "cat/.DS_Store": b"", "top.png": b""})
    flat = DirDataset(root, file_extension=".png")
    assert [os.path.relpath(flat[i]["x"], root) for i in range(len(flat))] == \
        ["cat/img10.png", "cat/img2.png", "dog/a.png", "dog/sub/img1.png", "top.png"]
    assert [os.path.basename(DirDataset(root, recursive_search=False)[0]["x"])] == ["top.png"]
    labeled = LabeledDirDataset(root, file_extension=".png")
    # every folder that holds files is a class, named by its relative path, numbered in sorted order
    assert labeled.mapping == {"": 0, "cat": 1, "dog": 2, "dog/sub": 3}
    assert [labeled[i]["y"] for i in range(len(labeled))] == [0, 1, 1, 2, 3]
    summary = labeled.summary()
    assert summary.class_key == "y" and summary.num_classes == 4 and summary.class_key_mapping == labeled.mapping
    mapping = {"": "r", "cat": "c", "dog": "d", "dog/sub": "s"}
    mapped = LabeledDirDataset(root, label_mapping=mapping, data_key="img", label_key="lab")
    assert mapped[1]["lab"] == "c" and len(mapped) == 6
    for error in (AssertionError, ValueError):
        with pytest.raises(error, match="no label for the class folders"):
            LabeledDirDataset(root, label_mapping={"cat": 0})
    for error in (AssertionError, FileNotFoundError):
        with pytest.raises(error):
            DirDataset(str(tmp_path / "absent"))


def test_siamese_dir_dataset_pairs_and_class_split(tmp_path):
    layout = {f"c{c}/{i}.png": b"" for c in range(4) for i in range(3)}
    ds = SiameseDirDataset(make_tree(tmp_path, layout), percent_matching_data=1.0)
    assert len(ds) == 12
    for index in range(len(ds)):
        pair = ds[index]
        assert pair["y"] == 1 and os.path.dirname(pair["x_a"]) == os.path.dirname(pair["x_b"])
        assert pair["x_a"] != pair["x_b"]
    ds.percent_matching_data = 0.0
    assert all(ds[i]["y"] == 0 and os.path.dirname(ds[i]["x_a"]) != os.path.dirname(ds[i]["x_b"]) for i in range(12))
    held = ds.split(1, seed=0)
    assert len(held) == 3 and len(ds) == 9 and held.summary().num_classes == 1
    left, right = ds.one_shot_trial(3)
    assert len(set(left)) == 1 and len(right) == 3 and left[0] != right[0]
    assert os.path.dirname(left[0]) == os.path.dirname(right[0])
    assert len({os.path.dirname(path) for path in right}) == 3


# ---------------------------------------------------------------------- generated and combined datasets
def test_generator_dataset_draws_samples_per_epoch():
    def numbers():
        value = 0
        while True:
            yield {"x": np.array([value])}
            value += 1

    ds = GeneratorDataset(numbers(), samples_per_epoch=4)
    assert len(ds) == 4 and ds.keys() == ["x"]
    pipeline = Pipeline(train_data=ds, batch_size=2)
    with pipeline(mode="train", epoch=1) as loader:
        batches = [batch["x"][:, 0].tolist() for batch in loader]
    assert len(batches) == 2 and batches[0][0] < batches[1][1]
    with pytest.raises(DatasetArgumentError):
        GeneratorDataset(numbers(), samples_per_epoch=0)
    assert GeneratorDataset(numbers, samples_per_epoch=2)[0]["x"].tolist() == [0]  # a generator function works too
    with pytest.raises(DatasetArgumentError, match="needs a generator"):
        GeneratorDataset([{"x": 1}], samples_per_epoch=1)
    with pytest.raises(DatasetArgumentError, match="cannot be split"):
        ds.split(0.5)


def test_extend_dataset_grows_or_shrinks_the_epoch_and_resamples_each_epoch():
    base = NumpyDataset({"x": np.arange(10)})
    short = ExtendDataset(base, spoof_length=4)
    pipeline = Pipeline(train_data=short, batch_size=2)
    np.random.seed(0)
    seen = []
    for epoch in (1, 2, 3):
        with pipeline(mode="train", epoch=epoch) as loader:
            values = np.concatenate([batch["x"] for batch in loader]).tolist()
        assert len(values) == 4 and len(set(values)) == 4
        seen.extend(values)
    assert len(set(seen)) > 4
    longer = ExtendDataset(base, spoof_length=25)
    longer.fe_reset_ds(shuffle=True)
    counts = np.bincount([int(longer[i]["x"]) for i in range(25)], minlength=10)
    assert counts.min() == 2 and counts.max() == 3
    with pytest.raises(AssertionError):
        ExtendDataset(longer, 3)
    batches = ExtendDataset(BatchDataset([base], num_samples=[4]), spoof_length=5)  # 3 batches stretched to 5
    with Pipeline(train_data=batches)(mode="train", epoch=1) as loader:
        assert [len(batch["x"]) for batch in loader] == [4] * 5


def test_combined_dataset_concatenates_and_checks_keys():
    a, b = NumpyDataset({"x": np.arange(3)}), NumpyDataset({"x": np.arange(10, 12)})
    ds = CombinedDataset([a, b])
    assert len(ds) == 5 and int(ds[3]["x"]) == 10 and int(ds[-1]["x"]) == 11
    with pytest.raises(AssertionError):
        CombinedDataset([a])
    with pytest.raises(KeyError, match="same keys"):
        CombinedDataset([a, NumpyDataset({"y": np.arange(2)})])


def test_batch_dataset_unpaired_datasets_merge_samples():
    a = NumpyDataset({"a": np.arange(8)})
    b = NumpyDataset({"b": np.arange(100, 106)})
    ds = BatchDataset(datasets=[a, b], num_samples=[4, 4])
    assert len(ds) == 2 and ds.keys() == ["a", "b"]
    pipeline = Pipeline(train_data=ds, ops=[LambdaOp(lambda v: v * 2, inputs="b", outputs="b")])
    with pipeline(mode="train", epoch=1) as loader:
        batches = list(loader)
    assert [batch["a"].shape for batch in batches] == [(4,), (4,)]
    assert sorted(np.concatenate([batch["a"] for batch in batches]).tolist()) == list(range(8))
    assert set(np.concatenate([batch["b"] for batch in batches]).tolist()) == {200, 202, 204, 206, 208, 210}


def test_batch_dataset_deterministic_and_probabilistic_balance():
    ones = NumpyDataset({"x": np.ones(10), "y": np.ones(10, dtype=int)})
    zeros = NumpyDataset({"x": np.zeros(30), "y": np.zeros(30, dtype=int)})
    balanced = BatchDataset(datasets=[ones, zeros], num_samples=[3, 5])
    assert len(balanced) == 6
    with Pipeline(train_data=balanced)(mode="train", epoch=1) as loader:
        batches = list(loader)
    assert all(batch["y"].tolist().count(1) == 3 and len(batch["y"]) == 8 for batch in batches)
    assert any(batch["y"].tolist() != [1, 1, 1, 0, 0, 0, 0, 0] for batch in batches)  # shuffled inside batches
    fresh = BatchDataset(datasets=[ones, zeros], num_samples=[3, 5])  # never shuffled: samples stay in order
    with Pipeline(eval_data=fresh)(mode="eval", epoch=1) as loader:
        assert all(batch["y"].tolist() == [1, 1, 1, 0, 0, 0, 0, 0] for batch in loader)
    np.random.seed(1)
    random_mix = BatchDataset(datasets=[ones, zeros], num_samples=50, probability=[0.7, 0.3])
    assert len(random_mix) == 2  # max(ceil(10 / 50 / 0.7), ceil(30 / 50 / 0.3))
    with Pipeline(train_data=random_mix)(mode="train", epoch=1) as loader:
        share = np.mean([batch["y"].mean() for batch in loader])
    assert 0.5 < share < 0.9
    with pytest.raises(DatasetArgumentError):
        BatchDataset(datasets=[ones, zeros], num_samples=[3, 5], probability=[0.5, 0.5])
    with pytest.raises(DatasetArgumentError, match="same keys or no common keys"):
        BatchDataset(datasets=[ones, NumpyDataset({"x": np.ones(3), "z": np.ones(3)})], num_samples=[1, 1])
    left, right = balanced.split(0.5, seed=0), balanced
    assert isinstance(left, BatchDataset) and len(left.datasets[0]) == 5 and len(right.datasets[1]) == 15


def test_interleave_dataset_uses_each_ds_ids_ops_and_batch_size():
    ds1 = NumpyDataset({"x": np.zeros(8, dtype=int)})
    ds2 = NumpyDataset({"x": np.ones(9, dtype=int)})
    dataset = InterleaveDataset(datasets={"a": ds1, "b": ds2}, pattern=["a", "a", "b"])
    pipeline = Pipeline(train_data=dataset,
                        ops=[LambdaOp(lambda v: v + 10, inputs="x", outputs="x", ds_id="b"),
                             Batch(batch_size=2, ds_id="a"), Batch(batch_size=3, ds_id="b")])
    with pipeline(mode="train", epoch=1) as loader:
        batches = [batch["x"].tolist() for batch in loader]
        assert len(loader) == len(batches)
    assert batches == [[0, 0], [0, 0], [11, 11, 11], [0, 0], [0, 0], [11, 11, 11]]
    with pipeline(mode="train", epoch=1, steps_per_epoch=8) as loader:
        assert [len(batch["x"]) for batch in loader] == [2, 2, 3, 2, 2, 3, 2, 2]
    with pytest.raises(DatasetArgumentError, match="never uses"):
        InterleaveDataset([ds1, ds2], pattern=[0, 0])
    with pytest.raises(DatasetArgumentError, match="not datasets"):
        InterleaveDataset({"a": ds1, "b": ds2}, pattern=["a", "c"])
    with pytest.raises(AssertionError, match="more than one dataset"):
        InterleaveDataset([ds1])
    alternating = Pipeline(train_data=InterleaveDataset({"a": ds1, "b": ds2}),
                           ops=[Batch(batch_size=2, ds_id="a"), Batch(batch_size=3, ds_id="b")])
    with alternating(mode="train", epoch=1) as loader:  # whole repetitions only: min(4 // 1, 3 // 1) = 3
        assert [len(batch["x"]) for batch in loader] == [2, 3] * 3
    starved = Pipeline(train_data=InterleaveDataset([ds1, ds2]), ops=[Batch(batch_size=10)])
    with pytest.raises(DatasetArgumentError, match="single repetition"):
        with starved(mode="train", epoch=1) as loader:
            list(loader)
    parts = InterleaveDataset([ds1, ds2]).split(0.5, seed=0)
    # each member splits alike; FastEstimator rounds a fraction's count up (half of 9 takes 5)
    assert isinstance(parts, InterleaveDataset) and [len(d) for d in parts.datasets] == [4, 5]


# ---------------------------------------------------------------------- OpDataset and the data loader
def test_op_dataset_applies_ops_and_filters():
    base = NumpyDataset({"x": np.arange(4), "y": np.arange(4)})
    ds = OpDataset(base, [LambdaOp(lambda v: v * 10, inputs="x", outputs="x"),
                          RemoveIf(fn=lambda v: v == 20, replacement=False, inputs="x")], mode="train",
                   output_keys={"x"})
    assert ds[1] == {"x": 10}
    from fe_core.op.numpyop.remove_if import FilteredData
    assert isinstance(ds[2], FilteredData)


def test_fe_data_loader_batches_steps_and_postprocess():
    ds = NumpyDataset({"x": np.arange(5)})
    assert [b["x"].tolist() for b in FEDataLoader(ds, batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert len(FEDataLoader(ds, batch_size=2, drop_last=True)) == 2
    loader = FEDataLoader(ds, batch_size=2, steps_per_epoch=4)
    assert [b["x"].tolist() for b in loader] == [[0, 1], [2, 3], [4, 0], [1, 2]]
    from fe_core.op.numpyop.remove_if import FilteredData
    dropped = FEDataLoader(ds, batch_size=2, postprocess_fn=lambda b: FilteredData() if 0 in b["x"] else b)
    assert [b["x"].tolist() for b in dropped] == [[2, 3], [4]]
    batched = FEDataLoader(BatchDataset([ds], num_samples=[3]), batch_size=8)
    assert batched.get_batch_size() == 3 and [len(b["x"]) for b in batched] == [3, 3]
    sampler = iter(InfiniteSampler(range(3), shuffle=True))
    assert sorted(next(sampler) for _ in range(3)) == [0, 1, 2]


def test_labeled_dir_images_read_per_batch_equal_per_sample_reads(tmp_path):
    import cv2
    from fe_core.op.numpyop.univariate.read_image import ReadImage
    rng = np.random.default_rng(0)
    for index in range(5):
        folder = tmp_path / f"class{index % 2}"
        folder.mkdir(exist_ok=True)
        cv2.imwrite(str(folder / f"{index}.png"), rng.integers(0, 255, (4, 5, 3), dtype=np.uint8))
    ds = LabeledDirDataset(str(tmp_path))
    assert callable(ds.get_batch)
    gathered = ds.get_batch(np.array([4, 0]), keys=["y"])
    assert list(gathered) == ["y"] and gathered["y"].tolist() == [1, 0]
    for flag, channels in (("color", 3), ("gray", 1)):
        pipeline = Pipeline(eval_data=ds, batch_size=2, ops=[ReadImage("x", "x", color_flag=flag)])
        with pipeline(mode="eval", epoch=1) as loader:
            batches = list(loader)
        assert [batch["x"].shape for batch in batches] == [(2, 4, 5, channels)] * 2 + [(1, 4, 5, channels)]
        reader = ReadImage("x", "x", color_flag=flag)
        for position in range(5):
            expected = reader.forward([ds[position]["x"]], {})[0]
            np.testing.assert_array_equal(batches[position // 2]["x"][position % 2], expected)
        assert np.concatenate([batch["y"] for batch in batches]).tolist() == [ds[i]["y"] for i in range(5)]


def test_datasets_that_compute_their_samples_offer_no_get_batch(tmp_path):
    root = make_tree(tmp_path, {f"c{c}/{i}.png": b"" for c in range(2) for i in range(2)})
    assert SiameseDirDataset(root).get_batch is None
    assert callable(DirDataset(root).get_batch)
