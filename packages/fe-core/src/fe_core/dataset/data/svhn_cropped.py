"""SVHN cropped digits (http://ufldl.stanford.edu/housenumbers/, format 2): 32x32 digit images."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

BASE_URL = "http://ufldl.stanford.edu/housenumbers/"
MD5 = {"train_32x32.mat": "e26dedcc434d2e4c54c9b2d4a06d8373", "test_32x32.mat": "eb5a983be6a315427106f1b164d9cef3"}


@fe_export("fe.dataset.data.svhn_cropped.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the SVHN Cropped digits dataset.

    For more information about this dataset please visit http://ufldl.stanford.edu/housenumbers/. Here, we are using
    Format 2 to get MNIST-like 32-by-32 images. Reading the .mat files needs SciPy (the `data` extra of fe-core).

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, test_data): "x" uint8 (32, 32, 3), "y" shape (1,) with the digit 0..9.
    """
    scipy_io = import_optional("scipy.io", extra="data", feature="svhn_cropped.load_data")
    directory = data_dir(root_dir, "SVHN_Cropped")
    datasets = []
    for name in ("train_32x32.mat", "test_32x32.mat"):
        path = fetch(BASE_URL + name, directory, checksum=MD5[name])
        content = scipy_io.loadmat(path)
        labels = np.asarray(content["y"]).copy()
        labels[labels == 10] = 0
        datasets.append(NumpyDataset({"x": np.ascontiguousarray(np.transpose(content["X"], (3, 0, 1, 2))),
                                      "y": labels}))
    return datasets[0], datasets[1]
