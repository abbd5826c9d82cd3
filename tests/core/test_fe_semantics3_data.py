"""FastEstimator semantics, part 3 (issue 36): datasets' keys, stratified split counts, CombinedDataset errors,
nested dataset state and which datasets a checkpoint restores (numpy only)."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.dataset import NumpyDataset


def labelled(counts):
    y = np.concatenate([np.full(count, label) for label, count in enumerate(counts)])
    return NumpyDataset({"x": np.arange(len(y)), "y": y})


# ---------------------------------------------------------------------------------------------- stratified splits
@pytest.mark.parametrize("counts, fraction, expected", [
    ([13, 2], 0.3, [4, 1]),           # 15 * 0.3 = 4.5 -> 5 taken (FastEstimator rounds a fraction up): 5 / 10
    ([95, 5], 0.1, [9, 1]),           # 9.5 -> 10 and 0.5 -> 1 ask for 11: the largest class gives one back
    ([97, 2, 1], 0.05, [3, 1, 1]),    # every class keeps at least one sample; the largest gives back two
    ([50, 50], 0.25, [13, 12]),       # 12.5 rounds half to even: the first class takes the missing one
    ([8, 1, 1], 0.5, [3, 1, 1]),
])
def test_stratified_split_of_imbalanced_data_takes_fastestimators_counts(counts, fraction, expected):
    ds = labelled(counts)
    part = ds.split(fraction, seed=3, stratify="y")
    assert np.bincount(np.asarray(part["y"]), minlength=len(counts)).tolist() == expected
    assert len(part) + len(ds) == sum(counts)
    assert sorted(np.concatenate([part["x"], ds["x"]]).tolist()) == list(range(sum(counts)))


def test_stratified_split_into_several_parts_shares_what_is_left():
    ds = labelled([13, 2])
    first, second = ds.split(5, 5, seed=0, stratify="y")
    assert np.bincount(first["y"], minlength=2).tolist() == [4, 1]
    assert np.bincount(second["y"], minlength=2).tolist() == [4, 1]
    assert np.bincount(ds["y"], minlength=2).tolist() == [5, 0]


def test_a_fraction_counts_its_samples_rounded_up_as_fastestimator_does():
    ds = NumpyDataset({"x": np.arange(15)})
    assert len(ds.split(0.3)) == 5 and len(ds) == 10
    ds = NumpyDataset({"x": np.arange(1000)})
    assert len(ds.split(0.1)) == 100 and len(ds) == 900


# ---------------------------------------------------------------------------------------------- datasets' keys
def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xd8\xff")
    return str(path)


@pytest.fixture
def coco_dir(tmp_path):
    import json
    images = tmp_path / "val2017"
    for image_id in (1, 2):
        _touch(images / f"{image_id:012d}.jpg")
    instances = {"images": [{"id": 1, "height": 4, "width": 6}, {"id": 2, "height": 4, "width": 6}],
                 "annotations": [{"image_id": 1, "bbox": [0, 0, 2, 2], "category_id": 3, "iscrowd": 0,
                                  "segmentation": [[0, 0, 2, 0, 2, 2, 0, 2]], "area": 4},
                                 {"image_id": 2, "bbox": [1, 1, 3, 2], "category_id": 5, "iscrowd": 0,
                                  "segmentation": [[1, 1, 4, 1, 4, 3, 1, 3]], "area": 6}]}
    captions = {"annotations": [{"image_id": 1, "caption": "a"}, {"image_id": 2, "caption": "b"}]}
    people = {"annotations": [{"image_id": image_id, "num_keypoints": 1, "iscrowd": 0, "bbox": [0, 0, 1, 1],
                               "keypoints": [1, 1, 2] + [0] * 48} for image_id in (1, 2)]}
    files = {}
    for name, content in (("instances", instances), ("captions", captions), ("keypoints", people)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(content))
    return images, files


@pytest.mark.parametrize("includes", [dict(), dict(include_masks=True, include_captions=True),
                                      dict(include_bboxes=False, include_keypoints=True)])
def test_mscoco_keys_list_every_annotation_its_samples_hold(coco_dir, includes):
    from fe_core.dataset.data.mscoco import MSCOCODataset
    images, files = coco_dir
    ds = MSCOCODataset(str(images), str(files["instances"]), str(files["captions"]), str(files["keypoints"]),
                       **includes)
    for index in range(len(ds)):
        assert sorted(ds.keys()) == sorted(ds[index])
    assert sorted(ds.summary().keys) == sorted(ds.keys())


def test_a_pipeline_op_reading_mscoco_boxes_starts_in_eval(coco_dir):
    from fe_core.dataset.data.mscoco import MSCOCODataset
    from fe_core.op.numpyop import LambdaOp
    from fe_core.pipeline import Pipeline
    images, files = coco_dir
    ds = MSCOCODataset(str(images), str(files["instances"]), "", "")
    pipeline = Pipeline(eval_data=ds, batch_size=1,
                        ops=[LambdaOp(fn=lambda boxes: np.array([len(boxes), boxes[0][4]]), inputs="bbox",
                                      outputs="n", mode="eval")])
    assert np.asarray(pipeline.get_results(mode="eval")["n"]).tolist() == [[1, 3]]


def test_an_in_memory_dataset_computing_extra_keys_lists_them_without_shifting_the_random_stream():
    from fe_core.dataset.dataset import InMemoryDataset

    class Noisy(InMemoryDataset):
        def __getitem__(self, index):
            sample = dict(super().__getitem__(index))
            sample["noise"] = np.random.rand()
            return sample

    ds = Noisy({0: {"x": 1}, 1: {"x": 2}})
    np.random.seed(5)
    assert ds.keys() == ["x", "noise"]
    assert np.random.rand() == np.random.RandomState(5).rand()


def test_pascal_voc_keys_match_its_samples(tmp_path):
    from fe_core.dataset.data.pascal_voc import PascalVoc
    cv2 = pytest.importorskip("cv2")
    (tmp_path / "ImageSets" / "Main").mkdir(parents=True)
    (tmp_path / "ImageSets" / "Main" / "train.txt").write_text("img1\n")
    (tmp_path / "JPEGImages").mkdir()
    cv2.imwrite(str(tmp_path / "JPEGImages" / "img1.jpg"), np.zeros((4, 5, 3), np.uint8))
    (tmp_path / "Annotations").mkdir()
    (tmp_path / "Annotations" / "img1.xml").write_text(
        "<annotation><object><name>cat</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>3</xmax><ymax>3</ymax>"
        "</bndbox></object></annotation>")
    ds = PascalVoc(str(tmp_path), include_bboxes=True, include_masks=False)
    assert sorted(ds.keys()) == sorted(ds[0]) == ["bbox", "image", "mask"]
    assert ds[0]["bbox"] == [[1.0, 1.0, 3.0, 3.0, 7]]


def _class_tree(root):
    for label in ("cat", "dog"):
        for index in range(2):
            _touch(root / label / f"{index}.png")
    return str(root)


def test_directory_and_csv_datasets_keys_match_their_samples(tmp_path):
    from fe_core.dataset import CSVDataset, DirDataset, LabeledDirDataset, SiameseDirDataset
    root = _class_tree(tmp_path / "tree")
    csv = tmp_path / "rows.csv"
    csv.write_text("image,label,mode\na.png,0,train\nb.png,1,eval\n")
    datasets = [DirDataset(root, data_key="img"), LabeledDirDataset(root, data_key="img", label_key="cls"),
                SiameseDirDataset(root, data_key_left="l", data_key_right="r", label_key="same"),
                CSVDataset(str(csv))]
    for ds in datasets:
        assert sorted(ds.keys()) == sorted(ds[0]), type(ds).__name__
    assert sorted(datasets[2].keys()) == ["l", "r", "same"]
    assert sorted(datasets[3].keys()) == ["image", "label", "mode"]


# ---------------------------------------------------------------------------------------------- CombinedDataset errors
def _generated(make_sample, count=4):
    from fe_core.dataset import GeneratorDataset

    def draw():
        while True:
            yield make_sample()
    return GeneratorDataset(draw(), samples_per_epoch=count)


def test_combined_dataset_refuses_bad_input_with_fastestimators_messages_and_types():
    from fe_core.dataset import CombinedDataset, InterleaveDataset
    xy = lambda: {"x": np.random.rand(2), "y": 1}  # noqa: E731
    with pytest.raises(AssertionError) as error:
        CombinedDataset([])
    assert str(error.value) == "datasets should not be an empty iterable"
    for bad in ([_generated(xy), "ds2", "ds2"], [_generated(xy), _generated(lambda: (1, 2))],
                [_generated(xy), {0: {"x": 1, "y": 2}}]):
        with pytest.raises(AssertionError) as error:
            CombinedDataset(bad)
        assert str(error.value) == "Each dataset should be a type of PyTorch Dataset and should return a dictionary."
    with pytest.raises(KeyError) as error:
        CombinedDataset([_generated(xy), _generated(lambda: {"x1": 0, "y1": 1})])
    assert error.value.args[0] == "All datasets should have the same keys."
    interleaved = InterleaveDataset([NumpyDataset({"x": np.arange(3), "y": np.arange(3)})] * 2)
    with pytest.raises(AssertionError) as error:
        CombinedDataset([NumpyDataset({"x": np.arange(3), "y": np.arange(3)}), interleaved])
    assert str(error.value) == "CombinedDataset does not support InterleaveDataset"


def test_combined_dataset_out_of_range_indices_raise_fastestimators_errors():
    from fe_core.dataset import CombinedDataset
    combined = CombinedDataset([_generated(lambda: {"x": 0, "y": 1}, 10), _generated(lambda: {"x": 2, "y": 3}, 10)])
    assert len(combined) == 20 and sorted(combined[12]) == ["x", "y"] and combined[12]["x"] == 2
    with pytest.raises(IndexError) as error:
        combined[20]
    assert str(error.value) == "list index out of range"
    with pytest.raises(ValueError) as error:
        combined[-21]
    assert str(error.value) == "absolute value of index should not exceed dataset length"
    assert combined[-1]["x"] == 2


# ---------------------------------------------------------------------------------------------- RemoveIf replacement
def _epoch(pipeline, **kwargs):
    with pipeline(mode="train", **kwargs) as loader:
        return [{key: np.asarray(value) for key, value in batch.items()} for batch in loader]


def test_a_filter_rejecting_most_draws_gets_replacements_until_the_epoch_is_full():
    from fe_core.op.numpyop import RemoveIf
    from fe_core.pipeline import Pipeline
    np.random.seed(0)  # 90% of draws rejected: dozens in a row over 5 samples, which FastEstimator keeps replacing
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(5)}), batch_size=5,
                        ops=[RemoveIf(fn=lambda x: np.random.rand() < 0.9, inputs="x")])
    for _ in range(3):
        batches = _epoch(pipeline)
        assert [len(batch["x"]) for batch in batches] == [5]


def test_a_batch_dataset_filter_rejecting_most_batches_gets_replacements_until_the_epoch_is_full():
    from fe_core.dataset import BatchDataset
    from fe_core.op.numpyop import RemoveIf
    from fe_core.pipeline import Pipeline
    np.random.seed(1)
    data = BatchDataset([NumpyDataset({"a": np.arange(4)}), NumpyDataset({"b": np.arange(4)})], num_samples=[2, 2])
    # a batch passes only when one of its pairings matches (a == b): rare, but new pairings come with each draw
    pipeline = Pipeline(train_data=data, ops=[RemoveIf(fn=lambda a, b: a != b, inputs=("a", "b"))])
    batches = _epoch(pipeline)
    assert len(batches) == len(data) == 2
    assert all(np.array_equal(batch["a"], batch["b"]) for batch in batches)


def test_a_filter_rejecting_everything_is_still_refused_in_bounded_time():
    from fe_core.op.numpyop import RemoveIf
    from fe_core.pipeline import Pipeline
    pipeline = Pipeline(train_data=NumpyDataset({"x": np.arange(3)}), batch_size=2,
                        ops=[RemoveIf(fn=lambda x: True, inputs="x")])
    with pytest.raises(ValueError, match="filtered out 1000 samples in a row"):
        _epoch(pipeline)


# ---------------------------------------------------------------------------------------------- nested dataset state
class _VarDataset(NumpyDataset):
    def __init__(self, data, var):
        super().__init__(data)
        self.var = var


class _PlainDataset:
    def __init__(self, size, var):
        self.size, self.var = size, var

    def __getitem__(self, index):
        return {"x": np.int64(index)}

    def __len__(self):
        return self.size


def test_only_fe_datasets_and_subclasses_are_checkpointed_datasets():
    from fe_core.dataset import CombinedDataset
    from fe_core.dataset._nested_state import is_fe_dataset
    assert is_fe_dataset(_VarDataset({"x": np.arange(2)}, 1))
    assert is_fe_dataset(CombinedDataset([_VarDataset({"x": np.arange(2)}, 1), _VarDataset({"x": np.arange(2)}, 1)]))
    assert not is_fe_dataset(_PlainDataset(2, 1))


def test_members_of_batch_combined_and_extend_datasets_are_restored_with_their_position():
    from fe_core.checkpoint.object_state import check_object_state, get_object_state, set_object_state
    from fe_core.dataset import BatchDataset, CombinedDataset, ExtendDataset

    def build():
        fe_member, plain = _VarDataset({"x": np.arange(6)}, var=1), _PlainDataset(4, var=1)
        extended = ExtendDataset(_VarDataset({"x": np.arange(3)}, var=1), spoof_length=5)
        return BatchDataset([fe_member, plain], num_samples=[2, 1]), CombinedDataset([extended, plain])

    batch, combined = build()
    np.random.seed(4)
    batch.fe_reset_ds(True)
    combined.fe_reset_ds(True)
    batch.datasets[0].var = batch.datasets[1].var = 5
    combined.datasets[0].dataset.var = 6
    states = [get_object_state(batch), get_object_state(combined)]
    fresh_batch, fresh_combined = build()
    for fresh, state in zip((fresh_batch, fresh_combined), states):
        check_object_state(fresh, state, "test")
        set_object_state(fresh, state)
    assert fresh_batch.datasets[0].var == 5 and fresh_batch.datasets[1].var == 1  # not fe's: the script's value
    assert fresh_combined.datasets[0].dataset.var == 6
    assert [[int(s["x"]) for s in fresh_batch[i]] for i in range(len(batch))] == \
        [[int(s["x"]) for s in batch[i]] for i in range(len(batch))]
    assert [int(fresh_combined[i]["x"]) for i in range(len(combined))] == \
        [int(combined[i]["x"]) for i in range(len(combined))]


def test_a_nested_dataset_state_of_another_shape_is_refused_before_anything_changes():
    from fe_core.checkpoint.object_state import check_object_state, get_object_state
    from fe_core.dataset import BatchDataset
    two = BatchDataset([_VarDataset({"x": np.arange(4)}, 1), _VarDataset({"x": np.arange(4)}, 1)], num_samples=[1, 1])
    one = BatchDataset([_VarDataset({"x": np.arange(4)}, 1)], num_samples=[1])
    with pytest.raises(ValueError, match="2 member dataset state"):
        check_object_state(one, get_object_state(two), "test")
    state = get_object_state(two)
    state["datasets"][0]["var"] = "a/path"
    two.datasets[0].var = 3
    check_object_state(two, state, "test")  # a location is never taken from a checkpoint: ignored, not an error
    two.set_state(state)
    assert two.datasets[0].var == 3
