"""MedMNIST v2 (https://medmnist.com): 18 standardized biomedical image data sets (2D 28x28 and 3D 28x28x28)."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data", "DATASET_NAMES"]

_ZENODO = "https://zenodo.org/records/10519652/files"
DATASET_NAMES = ("chestmnist", "adrenalmnist3d", "bloodmnist", "breastmnist", "dermamnist", "fracturemnist3d",
                 "nodulemnist3d", "octmnist", "organamnist", "organcmnist", "organmnist3d", "organsmnist",
                 "pathmnist", "pneumoniamnist", "retinamnist", "synapsemnist3d", "tissuemnist", "vesselmnist3d")


@fe_export("fe.dataset.data.medmnist.load_data")
def load_data(dataset_name: str, root_dir: Optional[str] = None, image_key: str = "x",
              label_key: str = "y") -> Tuple[NumpyDataset, NumpyDataset, NumpyDataset]:
    """Download and load the medmnist data. Medmnist has 18 datasets (see `DATASET_NAMES`).

    For more details on the dataset, please check https://medmnist.com, https://zenodo.org/record/6496656

    Args:
        dataset_name: Name of the dataset to download and load.
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.

    Raises:
        ValueError: if the dataset_name is invalid

    Returns:
        (train_data, val_data, test_data)
    """
    if dataset_name not in DATASET_NAMES:
        raise ValueError(f"Invalid value for dataset_name: {dataset_name!r}; choose one of {list(DATASET_NAMES)}")
    directory = data_dir(root_dir, "medmnist")
    path = fetch(f"{_ZENODO}/{dataset_name}.npz?download=1", directory, file_name=f"{dataset_name}.npz")
    with np.load(path, allow_pickle=False) as arrays:
        return tuple(NumpyDataset({image_key: arrays[f"{split}_images"], label_key: arrays[f"{split}_labels"]})
                     for split in ("train", "val", "test"))  # type: ignore[return-value]
