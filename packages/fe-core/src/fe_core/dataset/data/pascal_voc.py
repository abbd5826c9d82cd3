"""PASCAL VOC 2012 (http://host.robots.ox.ac.uk/pascal/VOC/voc2012/): segmentation masks and object boxes."""
from __future__ import annotations

import collections
import os
import xml.etree.ElementTree as ElementTree
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.dataset import DatasetArgumentError, FEDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["PascalVoc", "load_data", "VOC_CLASSES", "VOC_COLORMAP"]

URL = "http://host.robots.ox.ac.uk/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar"
VOC_COLORMAP = [[128, 0, 0], [0, 128, 0], [128, 128, 0], [0, 0, 128], [128, 0, 128], [0, 128, 128], [128, 128, 128],
                [64, 0, 0], [192, 0, 0], [64, 128, 0], [192, 128, 0], [64, 0, 128], [192, 0, 128], [64, 128, 128],
                [192, 128, 128], [0, 64, 0], [128, 64, 0], [0, 192, 0], [128, 192, 0], [0, 64, 128]]
VOC_CLASSES = ["aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow", "diningtable",
               "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"]


def _read_rgb(path: str) -> np.ndarray:
    cv2 = import_optional("cv2", extra="image", feature="PascalVoc")
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    if image is None:
        raise FileNotFoundError(f"PascalVoc could not read the image {path}")
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)


@fe_export("fe.dataset.data.pascal_voc.PascalVoc")
class PascalVoc(FEDataset):
    """A specialized dataset to handle PascalVoc2012 data.

    Samples hold "image" (RGB uint8), "mask" ((height, width, 20) float32 one-hot per class colour, or [] when masks
    are off or the image has none) and "bbox" (list of [xmin, ymin, xmax, ymax, class index], or []).

    Args:
        root_dir: The path to the VOC2012 directory (holding JPEGImages, Annotations, ...).
        include_bboxes: Whether images should be paired with their associated bounding boxes.
        include_masks: Whether images should be paired with their associated masks.
        image_set: To choose Training data or Validation data. Must be one of ["train", "trainval", "val"]

    Raises:
        ValueError: If `image_set` is not one of the three.
    """

    def __init__(self, root_dir: str, include_bboxes: bool = False, include_masks: bool = True,
                 image_set: str = "train") -> None:
        if image_set not in ("train", "trainval", "val"):
            raise ValueError(f'image_set must be either "train", "trainval" or "val" but received: {image_set!r}')
        self.root_dir, self.include_bboxes, self.include_masks = root_dir, include_bboxes, include_masks
        self.cls2ind = {name: index for index, name in enumerate(VOC_CLASSES)}
        self.seg_names = self._names("Segmentation", image_set) if include_masks else []
        self.box_names = self._names("Main", image_set) if include_bboxes else []
        self.filenames = sorted(set(self.seg_names) | set(self.box_names))
        self._seg, self._box = set(self.seg_names), set(self.box_names)

    def _names(self, kind: str, image_set: str) -> List[str]:
        with open(os.path.join(self.root_dir, "ImageSets", kind, f"{image_set}.txt")) as stream:
            return [line.strip() for line in stream if line.strip()]

    def __len__(self) -> int:
        return len(self.filenames)

    def __getitem__(self, index: int) -> Dict[str, Any]:
        name = self.filenames[index]
        image: Any = []
        mask: Any = []
        bbox: List[List[Any]] = []
        if name in self._box:
            image = _read_rgb(os.path.join(self.root_dir, "JPEGImages", f"{name}.jpg"))
            tree = ElementTree.parse(os.path.join(self.root_dir, "Annotations", f"{name}.xml"))
            bbox = self.get_objects(self.parse_voc_xml(tree.getroot()))
        if name in self._seg:
            if isinstance(image, list):
                image = _read_rgb(os.path.join(self.root_dir, "JPEGImages", f"{name}.jpg"))
            colours = _read_rgb(os.path.join(self.root_dir, "SegmentationClass", f"{name}.png"))
            mask = np.stack([np.all(colours == colour, axis=-1) for colour in VOC_COLORMAP], axis=-1)
            mask = mask.astype(np.float32)
        return {"image": image, "mask": mask, "bbox": bbox}

    def keys(self) -> List[str]:
        """The keys every sample holds ("mask" and "bbox" are empty when not requested or not annotated)."""
        return ["image", "mask", "bbox"]

    @staticmethod
    def parse_voc_xml(node: Any) -> Dict[str, Any]:
        """Parse xml file to read Bounding Box annotations of individual image files.

        Returns:
            Nested dicts mirroring the XML ({'annotation': {'object': [...], ...}}); repeated tags become lists and
            'object' is always a list.
        """
        children = list(node)
        if not children:
            return {node.tag: (node.text or "").strip()}
        grouped: Dict[str, List[Any]] = collections.defaultdict(list)
        for child in children:
            for tag, value in PascalVoc.parse_voc_xml(child).items():
                grouped[tag].append(value)
        result = {tag: values[0] if len(values) == 1 else values for tag, values in grouped.items()}
        if node.tag == "annotation":
            result["object"] = grouped.get("object", [])
        return {node.tag: result}

    def get_objects(self, ann_dict: Dict[str, Any]) -> List[List[Any]]:
        """Fetch and rearrange Bounding box coordinates: [xmin, ymin, xmax, ymax, class index] per object."""
        boxes = []
        for obj in ann_dict["annotation"]["object"]:
            box = obj["bndbox"]
            boxes.append([float(box["xmin"]), float(box["ymin"]), float(box["xmax"]), float(box["ymax"]),
                          self.cls2ind[obj["name"]]])
        return boxes

    def _do_split(self, splits: Any) -> List["PascalVoc"]:
        children = []
        for split in splits:
            child = object.__new__(PascalVoc)
            child.__dict__.update(self.__dict__)
            child.filenames = [self.filenames[int(i)] for i in split]
            children.append(child)
        taken = {int(i) for split in splits for i in split}
        self.filenames = [name for i, name in enumerate(self.filenames) if i not in taken]
        return children

    def _class_values(self, key: str) -> List[Any]:
        raise DatasetArgumentError("PascalVoc.split does not support stratify")


@fe_export("fe.dataset.data.pascal_voc.load_data")
def load_data(root_dir: Optional[str] = None, load_bboxes: bool = False,
              load_masks: bool = True) -> Tuple[PascalVoc, PascalVoc]:
    """Load and return the PascalVoc dataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        load_bboxes: Whether to load bbox-related data, in [x1, y1, x2, y2, class] format.
        load_masks: Whether to load mask data (in the form of an array of 1-hot images).

    Returns:
        (train_data, eval_data)
    """
    directory = data_dir(root_dir, "PascalVoc")
    fetch_and_extract(URL, directory, expected=["VOCdevkit"])
    folder = os.path.join(directory, "VOCdevkit", "VOC2012")
    return (PascalVoc(folder, include_bboxes=load_bboxes, include_masks=load_masks, image_set="train"),
            PascalVoc(folder, include_bboxes=load_bboxes, include_masks=load_masks, image_set="val"))
