"""Caltech-UCSD Birds 200 (CUB-200, 2010): 6033 bird images of 200 species, with segmentation annotations."""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

from fe_core.dataset.csv_dataset import CSVDataset
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.dir_dataset import list_files
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

IMAGES_URL = "http://www.vision.caltech.edu/visipedia-data/CUB-200/images.tgz"
ANNOTATIONS_URL = "http://www.vision.caltech.edu/visipedia-data/CUB-200/annotations.tgz"


@fe_export("fe.dataset.data.cub200.load_data")
def load_data(root_dir: Optional[str] = None) -> CSVDataset:
    """Load and return the Caltech-UCSD Birds 200 (CUB200) dataset.

    Sourced from http://www.vision.caltech.edu/visipedia/CUB-200.html. This method will download the data to local
    storage if the data has not been previously downloaded. The CSV (`cub200.csv`) lists each image, its class index
    and its annotation (.mat) file, relative to `dataset.parent_path`, in an order shuffled once with numpy's global
    random state.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        train_data: a CSVDataset with columns "image", "label", "annotation".
    """
    pandas = import_optional("pandas", extra="table", feature="cub200.load_data")
    directory = data_dir(root_dir, "CUB200")
    fetch_and_extract(IMAGES_URL, directory, expected=["images"])
    fetch_and_extract(ANNOTATIONS_URL, directory, expected=["annotations-mat"])
    csv_path = os.path.join(directory, "cub200.csv")
    if not os.path.exists(csv_path):
        image_root = os.path.join(directory, "images")
        classes = sorted(name for name in os.listdir(image_root) if not name.startswith(".")
                         and os.path.isdir(os.path.join(image_root, name)))
        rows = []
        for label, name in enumerate(classes):
            for path in list_files(os.path.join(image_root, name), recursive_search=False):
                image = os.path.relpath(path, directory)
                annotation = os.path.splitext(image.replace("images", "annotations-mat", 1))[0] + ".mat"
                rows.append((image, label, annotation))
        order = np.random.permutation(len(rows))
        frame = pandas.DataFrame([rows[i] for i in order], columns=["image", "label", "annotation"])
        frame.to_csv(csv_path + ".tmp", index=False)
        os.replace(csv_path + ".tmp", csv_path)
    return CSVDataset(csv_path)
