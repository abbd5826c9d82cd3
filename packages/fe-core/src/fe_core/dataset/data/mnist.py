"""MNIST handwritten digits (70000 28x28 grey images), from the mnist.npz that Keras and FastEstimator use."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


@fe_export("fe.dataset.data.mnist.load_data")
def load_data(image_key: str = "x", label_key: str = "y") -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the MNIST dataset.

    Downloaded once (sha256-checked) into `~/fastestimator_data/MNIST` (or `$FE_DATA_DIR/MNIST`); no framework is
    imported.

    Args:
        image_key: The key for image.
        label_key: The key for label.

    Returns:
        (train_data, eval_data): 60000 and 10000 samples; images uint8 (28, 28), labels uint8 scalars.
    """
    directory = data_dir(None, "MNIST")
    path = fetch(URL, directory, checksum=SHA256, algorithm="sha256")
    with np.load(path, allow_pickle=False) as arrays:
        train = NumpyDataset({image_key: arrays["x_train"], label_key: arrays["y_train"]})
        evaluation = NumpyDataset({image_key: arrays["x_test"], label_key: arrays["y_test"]})
    return train, evaluation
