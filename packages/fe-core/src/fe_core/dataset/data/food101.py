"""Food-101 (https://data.vision.ee.ethz.ch/cvl/datasets_extra/food-101/): 101000 images of 101 dishes."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from fe_core.dataset.csv_dataset import CSVDataset
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

URL = "http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz"


def _write_csv(images: List[str], labels: Dict[str, int], csv_path: str) -> None:
    pandas = import_optional("pandas", extra="table", feature="food101.load_data")
    order = np.random.permutation(len(images))
    names = [images[i] for i in order]
    frame = pandas.DataFrame({"image": [f"food-101/images/{name}.jpg" for name in names],
                              "label": [labels[name.split("/")[0]] for name in names]})
    frame.to_csv(csv_path + ".tmp", index=False)
    os.replace(csv_path + ".tmp", csv_path)


@fe_export("fe.dataset.data.food101.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[CSVDataset, CSVDataset]:
    """Load and return the Food-101 dataset.

    Food-101 dataset is a collection of images from 101 food categories.
    Sourced from http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, test_data): CSVDatasets with "image" (relative to `parent_path`) and "label" columns.
    """
    directory = data_dir(root_dir, "Food_101")
    fetch_and_extract(URL, directory, expected=["food-101"])
    meta = os.path.join(directory, "food-101", "meta")
    with open(os.path.join(meta, "classes.txt")) as stream:
        classes = stream.read().split()
    labels = {name: index for index, name in enumerate(classes)}
    paths = []
    for split in ("train", "test"):
        csv_path = os.path.join(directory, f"{split}.csv")
        if not os.path.exists(csv_path):
            with open(os.path.join(meta, f"{split}.txt")) as stream:
                _write_csv(stream.read().split(), labels, csv_path)
        paths.append(csv_path)
    return CSVDataset(paths[0]), CSVDataset(paths[1])
