"""Labeled chest X-ray images (Kermany et al., Mendeley Data v2): NORMAL vs PNEUMONIA."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.labeled_dir_dataset import LabeledDirDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = ("https://data.mendeley.com/datasets/rscbjbr9sj/2/files/41d542e7-7f91-47f6-9ff2-dd8e5a5a7861/"
       "ChestXRay2017.zip?dl=1")


@fe_export("fe.dataset.data.mendeley.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[LabeledDirDataset, LabeledDirDataset]:
    """Load and return the Mendeley dataset.

    Kermany, Daniel; Zhang, Kang; Goldbaum, Michael (2018), "Labeled Optical Coherence Tomography (OCT) and Chest
    X-Ray Images for Classification", Mendeley Data, v2 http://dx.doi.org/10.17632/rscbjbr9sj.2

    CC BY 4.0 licence: https://creativecommons.org/licenses/by/4.0/

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, test_data): labels NORMAL -> 0, PNEUMONIA -> 1.
    """
    directory = data_dir(root_dir, "Mendeley")
    fetch_and_extract(URL, directory, expected=["chest_xray"], file_name="ChestXRay2017.zip",
                      members=lambda name: name.startswith("chest_xray/"))
    folder = os.path.join(directory, "chest_xray")
    mapping = {"NORMAL": 0, "PNEUMONIA": 1}
    return (LabeledDirDataset(os.path.join(folder, "train"), label_mapping=mapping, file_extension=".jpeg"),
            LabeledDirDataset(os.path.join(folder, "test"), label_mapping=mapping, file_extension=".jpeg"))
