"""SVHN full numbers (http://ufldl.stanford.edu/housenumbers/, format 1): house-number photos with digit boxes."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.pickle_dataset import PickleDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

BASE_URL = "http://ufldl.stanford.edu/housenumbers/"


def _values(handle: Any, entry: Any) -> List[int]:
    """The numbers of one digitStruct field: a scalar dataset, or a column of references to scalars."""
    if entry.shape[0] == 1:
        return [int(entry[()].reshape(-1)[0])]
    return [int(handle[reference][()].reshape(-1)[0]) for reference in entry[:, 0]]


def _boxes(mat_path: str, split: str) -> List[Dict[str, Any]]:
    """One row per image: its path (relative to the data folder), digit labels and boxes (x1, y1, width, height)."""
    h5py = import_optional("h5py", extra="data", feature="svhn.load_data")
    rows = []
    with h5py.File(mat_path, "r") as handle:
        names, boxes = handle["/digitStruct/name"], handle["/digitStruct/bbox"]
        for index in range(len(names)):
            name = "".join(chr(int(code)) for code in handle[names[index, 0]][()].reshape(-1))
            box = handle[boxes[index, 0]]
            fields = {key: _values(handle, box[key]) for key in ("label", "left", "top", "width", "height")}
            rows.append({"image": os.path.join(split, name), "label": fields["label"], "x1": fields["left"],
                         "y1": fields["top"], "width": fields["width"], "height": fields["height"]})
    return rows


@fe_export("fe.dataset.data.svhn.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[PickleDataset, PickleDataset]:
    """Load and return the Street View House Numbers (SVHN) dataset.

    The digit boxes are read once from each split's digitStruct.mat (needs h5py and pandas, `fe[data]`) into a
    pickled DataFrame that this function writes itself, then served by PickleDataset.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, test_data): rows with "image" (relative to `parent_path`), "label", "x1", "y1", "width",
        "height" (lists, one entry per digit).
    """
    pandas = import_optional("pandas", extra="data", feature="svhn.load_data")
    directory = data_dir(root_dir, "SVHN")
    datasets = []
    for split in ("train", "test"):
        fetch_and_extract(BASE_URL + f"{split}.tar.gz", directory, expected=[split])
        pickle_path = os.path.join(directory, f"{split}.pickle")
        if not os.path.exists(pickle_path):
            frame = pandas.DataFrame(_boxes(os.path.join(directory, split, "digitStruct.mat"), split),
                                     columns=["image", "label", "x1", "y1", "width", "height"])
            frame.to_pickle(pickle_path + ".tmp")
            os.replace(pickle_path + ".tmp", pickle_path)
        datasets.append(PickleDataset(pickle_path))
    return datasets[0], datasets[1]
