"""CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html): 60000 32x32 colour images in 10 classes."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._cifar import read_batches
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
MD5 = "c58f30108f718f92721af3b95e74349a"
FOLDER = "cifar-10-batches-py"


@fe_export("fe.dataset.data.cifar10.load_data")
def load_data(root_dir: Optional[str] = None, image_key: str = "x", label_key: str = "y",
              channels_last: bool = True) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the CIFAR10 dataset.

    Please consider using the ciFAIR10 dataset instead. CIFAR10 contains duplicates between its train and test sets.
    Downloaded once from the CIFAR site (md5-checked) into `root_dir/CIFAR10`.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.
        channels_last: Whether channel is last (images (N, 32, 32, 3), else (N, 3, 32, 32)); uint8.

    Returns:
        (train_data, eval_data): 50000 and 10000 samples; labels are uint8 of shape (1,).
    """
    directory = data_dir(root_dir, "CIFAR10")
    fetch_and_extract(URL, directory, expected=[FOLDER], checksum=MD5)
    folder = os.path.join(directory, FOLDER)
    x_train, y_train = read_batches(folder, [f"data_batch_{i}" for i in range(1, 6)], "labels", channels_last)
    x_eval, y_eval = read_batches(folder, ["test_batch"], "labels", channels_last)
    return NumpyDataset({image_key: x_train, label_key: y_train}), NumpyDataset({image_key: x_eval, label_key: y_eval})
