"""CIFAR-100 (https://www.cs.toronto.edu/~kriz/cifar.html): 60000 32x32 colour images in 100 (or 20 coarse) classes."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._cifar import read_batches
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
MD5 = "eb9058c3a382ffc7106e4002c42a8d85"
FOLDER = "cifar-100-python"


def check_label_mode(label_mode: str) -> None:
    """Raise ValueError unless `label_mode` is 'fine' or 'coarse'."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f"label_mode must be one of either 'fine' or 'coarse', got {label_mode!r}")


@fe_export("fe.dataset.data.cifar100.load_data")
def load_data(root_dir: Optional[str] = None, image_key: str = "x", label_key: str = "y", label_mode: str = "fine",
              channels_last: bool = True) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the CIFAR100 dataset.

    Please consider using the ciFAIR100 dataset instead. CIFAR100 contains duplicates between its train and test
    sets.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.
        label_mode: Either "fine" for 100 classes or "coarse" for 20 classes.
        channels_last: Whether channel is last.

    Returns:
        (train_data, eval_data)

    Raises:
        ValueError: If the label_mode is invalid.
    """
    check_label_mode(label_mode)
    directory = data_dir(root_dir, "CIFAR100")
    fetch_and_extract(URL, directory, expected=[FOLDER], checksum=MD5)
    folder = os.path.join(directory, FOLDER)
    x_train, y_train = read_batches(folder, ["train"], f"{label_mode}_labels", channels_last)
    x_eval, y_eval = read_batches(folder, ["test"], f"{label_mode}_labels", channels_last)
    return NumpyDataset({image_key: x_train, label_key: y_train}), NumpyDataset({image_key: x_eval, label_key: y_eval})
