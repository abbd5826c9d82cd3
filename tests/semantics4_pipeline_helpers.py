"""Pieces shared by the numpy, torch and tf tests of FastEstimator semantics part 4's pipeline behaviours
(test_fe_semantics4_pipeline*.py): a small MSCOCO directory and the pipeline of FastEstimator's YOLOv5 scripts,
which read `image_id` in eval and then delete it. Framework-free (fe_core only)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Tuple

import numpy as np

from fe_core.dataset import NumpyDataset
from fe_core.dataset.data.mscoco import MSCOCODataset
from fe_core.op.numpyop import Batch, Delete, LambdaOp, NumpyOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace


def make_coco(root: str, image_ids: Tuple[int, ...] = (1, 2, 3, 4)) -> MSCOCODataset:
    """An MSCOCO dataset of empty '.jpg' files (never read) with one box each, category = image id + 2."""
    images = os.path.join(root, "val2017")
    os.makedirs(images, exist_ok=True)
    for image_id in image_ids:
        with open(os.path.join(images, f"{image_id:012d}.jpg"), "wb") as stream:
            stream.write(b"\xff\xd8\xff")
    instances = {"images": [{"id": image_id, "height": 4, "width": 6} for image_id in image_ids],
                 "annotations": [{"image_id": image_id, "bbox": [0, 0, 2, 2], "category_id": image_id + 2,
                                  "iscrowd": 0, "area": 4} for image_id in image_ids]}
    annotation_file = os.path.join(root, "instances.json")
    with open(annotation_file, "w", encoding="utf-8") as stream:
        json.dump(instances, stream)
    return MSCOCODataset(images, annotation_file, "", "")


def yolo_style_pipeline(root: str, delete_in_pipeline: bool = True) -> Pipeline:
    """FastEstimator's YOLOv5 pattern: eval samples come from MSCOCO (which adds 'image_id'); an op reads
    'image_id' and `Delete(keys="image_id", mode="eval")` drops it before batching (or, with
    `delete_in_pipeline=False`, the Network's TensorOp Delete does)."""
    train = NumpyDataset({"image": np.arange(16, dtype=np.float32).reshape(4, 4), "y": np.array([0, 1, 0, 1])})
    ops: List[Any] = [
        LambdaOp(fn=lambda image_id: np.full(4, image_id, dtype=np.float32), inputs="image_id", outputs="image",
                 mode="eval"),
        LambdaOp(fn=lambda boxes: np.int64(boxes[0][4] % 2), inputs="bbox", outputs="y", mode="eval"),
        LambdaOp(fn=lambda boxes: np.asarray(boxes, dtype=np.float32), inputs="bbox", outputs="bbox", mode="eval"),
    ]
    if delete_in_pipeline:
        ops.append(Delete(keys="image_id", mode="eval"))
    ops.append(Batch(batch_size=2, pad_value=0))
    return Pipeline(train_data=train, eval_data=make_coco(root), ops=ops)


class EvalKeys(Trace):
    """Records the keys and the boxes of each eval batch (as FastEstimator's MeanAveragePrecision reads 'bbox')."""

    def __init__(self, *more_inputs: str) -> None:
        super().__init__(inputs=["bbox", *more_inputs], mode="eval")
        self.keys: List[List[str]] = []
        self.boxes: List[np.ndarray] = []

    def on_batch_end(self, data: Any) -> None:
        self.keys.append(sorted(data.keys()))
        self.boxes.append(np.asarray(data["bbox"]))


def check_yolo_run(trace: EvalKeys, deleted_in_pipeline: bool) -> None:
    """Both eval batches reached the traces with their boxes, without 'image_id' when the Pipeline deleted it. A
    Network's Delete removes keys from what the network hands on: the traces see its outputs over the Pipeline's
    batch (FastEstimator's ChainMap(prediction, batch)), so the Pipeline's 'image_id' still shows there."""
    assert len(trace.boxes) == 2
    assert [box[0][4] for boxes in trace.boxes for box in boxes] == [3, 4, 5, 6]  # category = image id + 2
    for keys in trace.keys:
        assert "bbox" in keys and ("image_id" in keys) == (not deleted_in_pipeline)


class ListItems:
    """A map-style dataset of the user's own whose every item is a list of 5 samples (as FastEstimator's tests'
    datasets of pre-grouped samples), keys renamable."""

    def __init__(self, size: int, x_key: str = "x", y_key: str = "y") -> None:
        self.size, self.x_key, self.y_key = size, x_key, y_key

    def __getitem__(self, index: int) -> List[Dict[str, Any]]:
        return [{self.x_key: np.full(2, index * 10 + k, dtype=np.float32), self.y_key: np.int64(k)} for k in range(5)]

    def __len__(self) -> int:
        return self.size


def list_batch_pipeline(disjoint: bool) -> Pipeline:
    """A BatchDataset drawing 2 samples of a plain dataset and 1 item (5 samples) of a `ListItems` (same keys), or
    5 and 1 with disjoint keys (merged pairwise)."""
    from fe_core.dataset import BatchDataset
    plain = NumpyDataset({"x": np.arange(8, dtype=np.float32).reshape(4, 2), "y": np.arange(4)})
    if disjoint:
        return Pipeline(train_data=BatchDataset([plain, ListItems(4, "x1", "y1")], num_samples=[5, 1]))
    return Pipeline(train_data=BatchDataset([plain, ListItems(4)], num_samples=[2, 1]))


def named_pipeline() -> Pipeline:
    """Samples with a string column, batched by 2."""
    data = {"x": np.arange(4, dtype=np.float32), "name": np.array(["a", "b", "c", "d"])}
    return Pipeline(train_data=NumpyDataset(data), batch_size=2)


class PlusHalf(NumpyOp):
    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return data + 0.5


def tagged_interleave_pipeline() -> Pipeline:
    """An InterleaveDataset of members 'a' and 'b' given as the Pipeline's ds_id 'source': one op for member 'a', one
    for 'source' (so both run on a's batches, one on b's)."""
    from fe_core.dataset import InterleaveDataset
    members = {"a": NumpyDataset({"x": np.arange(1, 5, dtype=np.float32)}),
               "b": NumpyDataset({"x": np.arange(10, 50, 10, dtype=np.float32)})}
    ops = [PlusHalf(inputs="x", outputs="x", ds_id="a"), PlusHalf(inputs="x", outputs="x", ds_id="source")]
    return Pipeline(train_data={"source": InterleaveDataset(members)}, batch_size=2, ops=ops)


def tagged_values(results: List[Dict[str, Any]]) -> List[List[float]]:
    return [np.asarray(batch["x"]).tolist() for batch in results]


TAGGED_EXPECTED = [[2.0, 3.0], [10.5, 20.5], [4.0, 5.0], [30.5, 40.5]]


def check_public_batches(tensor_type: type) -> None:
    """What user code gets back on a framework (`tensor_type` its tensors): `get_results` with list-valued batch data,
    string columns of loader batches as lists of str, and InterleaveDataset members running the ops of their tag and of
    the Pipeline's ds_id."""
    batch = list_batch_pipeline(disjoint=False).get_results()
    assert isinstance(batch["x"], tensor_type) and tuple(batch["x"].shape) == (7, 2)
    batch = list_batch_pipeline(disjoint=True).get_results()
    assert tuple(batch["x"].shape) == (5, 2) and tuple(batch["x1"].shape) == (5, 2)
    with named_pipeline()(mode="train", shuffle=False) as loader:
        batches = list(loader)
    assert [batch["name"] for batch in batches] == [["a", "b"], ["c", "d"]]
    assert isinstance(batches[0]["x"], tensor_type)
    assert named_pipeline().get_results()["name"] == ["a", "b"]
    results = tagged_interleave_pipeline().get_results(mode="train", num_steps=4, ds_id="source")
    assert isinstance(results[0]["x"], tensor_type) and tagged_values(results) == TAGGED_EXPECTED
