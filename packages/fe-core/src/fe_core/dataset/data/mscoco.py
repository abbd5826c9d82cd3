"""MS COCO 2017 (https://cocodataset.org): images with boxes, instance masks, captions and person keypoints."""
from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from fe_core.dataset.data._coco_masks import annotation_mask
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.dir_dataset import DirDataset
from fe_core.export import fe_export

__all__ = ["MSCOCODataset", "load_data"]


def _read_json(path: Optional[str]) -> Dict[str, Any]:
    if not path:
        return {}
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


@fe_export("fe.dataset.data.mscoco.MSCOCODataset")
class MSCOCODataset(DirDataset):
    """A specialized DirDataset to handle MSCOCO data.

    This dataset combines images from the MSCOCO data directory with their corresponding bboxes, masks, captions and
    keypoints (read from the annotation JSON files with the standard library; crowd annotations are left out).
    Samples hold "image" (the path), "image_id" (the int the file is named after, as in FastEstimator), and as requested "bbox" (list of [x1, y1, w, h, category_id]), "mask" (list of
    (height, width) uint8 masks, one per box), "caption" (list of str), "keypoint" (list of (17, 3) arrays of x, y,
    visibility) and "keypoint_bbox" (their boxes).

    Args:
        image_dir: The path the directory containing MSCOCO images.
        annotation_file: The path to the file containing annotation data.
        caption_file: The path the file containing caption data.
        keypoint_file: The path the file containing keypoint data.
        include_bboxes: Whether images should be paired with their associated bounding boxes.
        include_masks: Whether images should be paired with their associated masks.
        include_captions: Whether images should be paired with their associated captions.
        include_keypoints: Whether images should be paired with keypoints.
        min_bbox_area: Bounding boxes with a total area less than `min_bbox_area` will be discarded.
        replacement: If true, images without requested attributes will be ignored and other images may be oversampled
            in order to take their place (drawn from numpy's global random state).
    """

    def __init__(self, image_dir: str, annotation_file: str, caption_file: str, keypoint_file: str,
                 include_bboxes: bool = True, include_masks: bool = False, include_captions: bool = False,
                 include_keypoints: bool = False, min_bbox_area: float = 1.0, replacement: bool = True) -> None:
        super().__init__(root_dir=image_dir, data_key="image", file_extension=".jpg", recursive_search=False)
        self.include_bboxes, self.include_masks = include_bboxes, include_masks
        self.include_captions, self.include_keypoints = include_captions, include_keypoints
        self.min_bbox_area, self.replacement = min_bbox_area, replacement
        self.objects: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
        self.sizes: Dict[int, Tuple[int, int]] = {}
        if include_bboxes or include_masks:
            instances = _read_json(annotation_file)
            for image in instances.get("images", []):
                self.sizes[image["id"]] = (image["height"], image["width"])
            for annotation in instances.get("annotations", []):
                if not annotation.get("iscrowd", 0) and annotation["bbox"][2] * annotation["bbox"][3] >= min_bbox_area:
                    self.objects[annotation["image_id"]].append(annotation)
        self.captions: Dict[int, List[str]] = defaultdict(list)
        if include_captions:
            for annotation in _read_json(caption_file).get("annotations", []):
                self.captions[annotation["image_id"]].append(annotation["caption"])
        self.keypoints: Dict[int, List[Dict[str, Any]]] = defaultdict(list)
        if include_keypoints:
            for annotation in _read_json(keypoint_file).get("annotations", []):
                if not annotation.get("iscrowd", 0) and annotation.get("num_keypoints", 0) > 0:
                    self.keypoints[annotation["image_id"]].append(annotation)
        self._valid = [index for index in range(len(self.data)) if self._complete(self._image_id(index))]

    def _image_id(self, index: int) -> int:
        return int(os.path.splitext(os.path.basename(self.data[index]["image"]))[0])

    def _complete(self, image_id: int) -> bool:
        return ((not (self.include_bboxes or self.include_masks) or bool(self.objects.get(image_id)))
                and (not self.include_captions or bool(self.captions.get(image_id)))
                and (not self.include_keypoints or bool(self.keypoints.get(image_id))))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str):
            return super().__getitem__(index)
        sample = dict(super().__getitem__(index))
        image_id = self._image_id(index if index >= 0 else index + len(self))
        if self.replacement and not self._complete(image_id):
            if not self._valid:
                raise ValueError("MSCOCODataset: no image has all the requested annotations")
            index = self._valid[np.random.randint(len(self._valid))]
            sample = dict(super().__getitem__(index))
            image_id = self._image_id(index)
        sample["image_id"] = image_id
        objects = self.objects.get(image_id, [])
        if self.include_bboxes:
            sample["bbox"] = [list(annotation["bbox"]) + [annotation["category_id"]] for annotation in objects]
        if self.include_masks:
            height, width = self.sizes.get(image_id, (0, 0))
            sample["mask"] = [annotation_mask(annotation, height, width) for annotation in objects]
        if self.include_captions:
            sample["caption"] = list(self.captions.get(image_id, []))
        if self.include_keypoints:
            people = self.keypoints.get(image_id, [])
            sample["keypoint"] = [np.asarray(person["keypoints"], dtype=np.float32).reshape(17, 3)
                                  for person in people]
            sample["keypoint_bbox"] = [list(person["bbox"]) for person in people]
        return sample

    def keys(self) -> List[str]:
        """The keys every sample holds: "image", "image_id" and each requested annotation."""
        keys = ["image", "image_id"]
        keys += ["bbox"] if self.include_bboxes else []
        keys += ["mask"] if self.include_masks else []
        keys += ["caption"] if self.include_captions else []
        keys += ["keypoint", "keypoint_bbox"] if self.include_keypoints else []
        return keys

    def _clone_with(self, data: Dict[int, Dict[str, Any]]) -> "MSCOCODataset":
        child = super()._clone_with(data)
        child._valid = [index for index in range(len(data)) if child._complete(child._image_id(index))]
        return child  # type: ignore[return-value]

    def _do_split(self, splits: Any) -> List[Any]:
        children = super()._do_split(splits)
        self._valid = [index for index in range(len(self.data)) if self._complete(self._image_id(index))]
        return children


@fe_export("fe.dataset.data.mscoco.load_data")
def load_data(root_dir: Optional[str] = None, load_bboxes: bool = True, load_masks: bool = False,
              load_captions: bool = False, load_keypoints: bool = False,
              replacement: bool = True) -> Tuple[MSCOCODataset, MSCOCODataset]:
    """Load and return the COCO dataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        load_bboxes: Whether to load bbox-related data, in [x1, y1, w, h] format.
        load_masks: Whether to load mask data (in the form of an array of 1-hot images).
        load_captions: Whether to load caption-related data.
        load_keypoints: Whether to load keypoint data, in format of [array(17, 3)] with (x, y, v) rows, v=0 not
            labeled, v=1 labeled but not visible, v=2 labeled and visible; the box of each keypoint object is under
            'keypoint_bbox'.
        replacement: If the specific attribute is missing (like bbox), whether to replace the sample with another
            random sample.

    Returns:
        (train_data, eval_data)
    """
    directory = data_dir(root_dir, "MSCOCO2017")
    for folder, url in (("train2017", "http://images.cocodataset.org/zips/train2017.zip"),
                        ("val2017", "http://images.cocodataset.org/zips/val2017.zip"),
                        ("annotations", "http://images.cocodataset.org/annotations/annotations_trainval2017.zip")):
        fetch_and_extract(url, directory, expected=[folder])
    annotations = os.path.join(directory, "annotations")

    def split(name: str) -> MSCOCODataset:
        return MSCOCODataset(os.path.join(directory, name), os.path.join(annotations, f"instances_{name}.json"),
                             os.path.join(annotations, f"captions_{name}.json"),
                             os.path.join(annotations, f"person_keypoints_{name}.json"), include_bboxes=load_bboxes,
                             include_masks=load_masks, include_captions=load_captions,
                             include_keypoints=load_keypoints, replacement=replacement)

    return split("train2017"), split("val2017")
