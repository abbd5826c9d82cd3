"""horse2zebra (CycleGAN): unpaired photos of horses (A) and zebras (B)."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.batch_dataset import BatchDataset
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.dir_dataset import DirDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "http://efrosgans.eecs.berkeley.edu/cyclegan/datasets/horse2zebra.zip"


@fe_export("fe.dataset.data.horse2zebra.load_data")
def load_data(batch_size: int, root_dir: Optional[str] = None) -> Tuple[BatchDataset, BatchDataset]:
    """Load and return the horse2zebra dataset.

    Sourced from http://efrosgans.eecs.berkeley.edu/cyclegan/datasets/horse2zebra.zip. This method will download the
    data to local storage if the data has not been previously downloaded.

    Args:
        batch_size: The desired batch size.
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, eval_data): BatchDatasets whose batches hold `batch_size` horse image paths under "A" and as
        many zebra image paths under "B".
    """
    directory = data_dir(root_dir, "horse2zebra")
    fetch_and_extract(URL, directory, expected=["horse2zebra"])
    images = os.path.join(directory, "horse2zebra")

    def pair(split: str) -> BatchDataset:
        horses = DirDataset(os.path.join(images, f"{split}A"), data_key="A", file_extension=".jpg",
                            recursive_search=False)
        zebras = DirDataset(os.path.join(images, f"{split}B"), data_key="B", file_extension=".jpg",
                            recursive_search=False)
        return BatchDataset(datasets=[horses, zebras], num_samples=[batch_size, batch_size])

    return pair("train"), pair("test")
