"""USPS handwritten digits (16x16 grey images), from the ElemStatLearn zip.train.gz / zip.test.gz tables."""
from __future__ import annotations

import gzip
import os
from typing import Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.labeled_dir_dataset import LabeledDirDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

BASE_URL = "http://statweb.stanford.edu/~tibs/ElemStatLearn/datasets/"


def _read_table(path: str) -> Tuple[np.ndarray, np.ndarray]:
    """(images (N, 16, 16) float32 in [-1, 1], integer labels) from a gzipped table of label + 256 pixels per row."""
    with gzip.open(path, "rt") as stream:
        values = np.asarray(stream.read().split(), dtype=np.float32).reshape(-1, 257)
    return values[:, 1:].reshape(-1, 16, 16), values[:, 0].astype(np.int64)


def _write_images(images: np.ndarray, labels: np.ndarray, folder: str, split: str) -> None:
    """Write one PNG per image into folder/<label>/ (staged in a temporary folder, then moved into place)."""
    image_module = import_optional("PIL.Image", extra="image", feature="usps.load_data")
    staging = folder + ".tmp"
    os.makedirs(staging, exist_ok=True)
    for label in np.unique(labels):
        os.makedirs(os.path.join(staging, str(label)), exist_ok=True)
    for index, (image, label) in enumerate(zip(images, labels)):
        low, high = image.min(), image.max()
        scaled = ((image - low) / max(high - low, 1e-8) * 255).astype(np.uint8)
        image_module.fromarray(scaled).save(os.path.join(staging, str(label), f"{split}_{index}.png"))
    os.replace(staging, folder)


@fe_export("fe.dataset.data.usps.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[LabeledDirDataset, LabeledDirDataset]:
    """Load and return the USPS dataset.

    The tables are downloaded once and written out as PNG files (Pillow, `fe[image]`) in one folder per digit.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, test_data): LabeledDirDatasets of .png paths ("x") and digits ("y").
    """
    directory = data_dir(root_dir, "USPS")
    datasets = []
    for split in ("train", "test"):
        folder = os.path.join(directory, split)
        if not os.path.exists(folder):
            images, labels = _read_table(fetch(BASE_URL + f"zip.{split}.gz", directory))
            _write_images(images, labels, folder, split)
        datasets.append(LabeledDirDataset(folder, file_extension=".png"))
    return datasets[0], datasets[1]
