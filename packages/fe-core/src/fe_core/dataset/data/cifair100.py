"""ciFAIR-100 (https://cvjena.github.io/cifair/): CIFAR-100 with the test set's near-duplicates replaced."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._cifar import read_batches
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.data.cifar100 import check_label_mode
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://github.com/cvjena/cifair/releases/download/v1.0/ciFAIR-100.zip"
MD5 = "ddc236ab4b12eeb8b20b952614861a33"
FOLDER = "ciFAIR-100"


@fe_export("fe.dataset.data.cifair100.load_data")
def load_data(root_dir: Optional[str] = None, image_key: str = "x", label_key: str = "y",
              label_mode: str = "fine") -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the ciFAIR100 dataset.

    This is the cifar100 dataset but with test set duplicates removed and replaced. See
    https://arxiv.org/pdf/1902.00423.pdf or https://cvjena.github.io/cifair/ for details. Cite the paper if you use
    the dataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.
        label_mode: Either "fine" for 100 classes or "coarse" for 20 classes.

    Returns:
        (train_data, test_data)

    Raises:
        ValueError: If the label_mode is invalid.
    """
    check_label_mode(label_mode)
    directory = data_dir(root_dir, "ciFAIR100")
    fetch_and_extract(URL, directory, expected=[FOLDER], checksum=MD5)
    folder = os.path.join(directory, FOLDER)
    x_train, y_train = read_batches(folder, ["train"], f"{label_mode}_labels")
    x_test, y_test = read_batches(folder, ["test"], f"{label_mode}_labels")
    return NumpyDataset({image_key: x_train, label_key: y_train}), NumpyDataset({image_key: x_test, label_key: y_test})
