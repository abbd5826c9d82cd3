"""ciFAIR-10 (https://cvjena.github.io/cifair/): CIFAR-10 with the test set's near-duplicates of training images
replaced."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._cifar import read_batches
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://github.com/cvjena/cifair/releases/download/v1.0/ciFAIR-10.zip"
MD5 = "ca08fd390f0839693d3fc45c4e49585f"
FOLDER = "ciFAIR-10"


@fe_export("fe.dataset.data.cifair10.load_data")
def load_data(root_dir: Optional[str] = None, image_key: str = "x", label_key: str = "y"
              ) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the ciFAIR10 dataset.

    This is the cifar10 dataset but with test set duplicates removed and replaced. See
    https://arxiv.org/pdf/1902.00423.pdf or https://cvjena.github.io/cifair/ for details. Cite the paper if you use
    the dataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.

    Returns:
        (train_data, test_data): images uint8 (N, 32, 32, 3), labels uint8 (N, 1).
    """
    directory = data_dir(root_dir, "ciFAIR10")
    fetch_and_extract(URL, directory, expected=[FOLDER], checksum=MD5)
    folder = os.path.join(directory, FOLDER)
    x_train, y_train = read_batches(folder, [f"data_batch_{i}" for i in range(1, 6)], "labels")
    x_test, y_test = read_batches(folder, ["test_batch"], "labels")
    return NumpyDataset({image_key: x_train, label_key: y_train}), NumpyDataset({image_key: x_test, label_key: y_test})
