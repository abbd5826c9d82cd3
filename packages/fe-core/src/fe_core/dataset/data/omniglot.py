"""Omniglot (https://github.com/brendenlake/omniglot): 1623 handwritten characters from 50 alphabets."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.siamese_dir_dataset import SiameseDirDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

BASE_URL = "https://github.com/brendenlake/omniglot/raw/master/python/"


@fe_export("fe.dataset.data.omniglot.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[SiameseDirDataset, SiameseDirDataset]:
    """Load and return the Omniglot dataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, eval_data): SiameseDirDatasets over images_background and images_evaluation.
    """
    directory = data_dir(root_dir, "Omniglot")
    for name in ("images_background", "images_evaluation"):
        fetch_and_extract(BASE_URL + f"{name}.zip", directory, expected=[name])
    return (SiameseDirDataset(os.path.join(directory, "images_background")),
            SiameseDirDataset(os.path.join(directory, "images_evaluation")))
