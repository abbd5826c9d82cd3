"""Tiny ImageNet (http://cs231n.stanford.edu/tiny-imagenet-200.zip): 200 classes of 64x64 images."""
from __future__ import annotations

import os
import shutil
from typing import Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.labeled_dir_dataset import LabeledDirDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "http://cs231n.stanford.edu/tiny-imagenet-200.zip"


def _arrange(root: str) -> None:
    """Give train/ and val/ the class-folder layout: train/<wnid>/*.JPEG, val/<wnid>/*.JPEG."""
    train = os.path.join(root, "train")
    for wnid in os.listdir(train):
        images = os.path.join(train, wnid, "images")
        if os.path.isdir(images):
            for name in os.listdir(images):
                os.replace(os.path.join(images, name), os.path.join(train, wnid, name))
            os.rmdir(images)
        for name in os.listdir(os.path.join(train, wnid)):
            if name.endswith(".txt"):
                os.remove(os.path.join(train, wnid, name))
    val = os.path.join(root, "val")
    annotations = os.path.join(val, "val_annotations.txt")
    if os.path.exists(annotations):
        with open(annotations) as stream:
            for line in stream:
                fields = line.split()
                if len(fields) < 2:
                    continue
                os.makedirs(os.path.join(val, fields[1]), exist_ok=True)
                source = os.path.join(val, "images", fields[0])
                if os.path.exists(source):
                    os.replace(source, os.path.join(val, fields[1], fields[0]))
        shutil.rmtree(os.path.join(val, "images"), ignore_errors=True)
        os.remove(annotations)


@fe_export("fe.dataset.data.tiny_imagenet.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[LabeledDirDataset, LabeledDirDataset]:
    """Load and return the Tiny ImageNet dataset.

    Sourced from http://cs231n.stanford.edu/tiny-imagenet-200.zip. This method will download the data to local
    storage if the data has not been previously downloaded, and sort the validation images into class folders.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, eval_data): LabeledDirDatasets with keys "image" and "label".
    """
    directory = data_dir(root_dir, "tiny_imagenet")
    root = os.path.join(directory, "tiny-imagenet-200")
    marker = os.path.join(root, ".arranged")
    if not os.path.exists(marker):
        fetch_and_extract(URL, directory, expected=["tiny-imagenet-200"])
        _arrange(root)
        open(marker, "w").close()
    return (LabeledDirDataset(os.path.join(root, "train"), data_key="image", label_key="label"),
            LabeledDirDataset(os.path.join(root, "val"), data_key="image", label_key="label"))
