"""Montgomery County chest X-ray set (NLM): 138 X-rays with left and right lung masks."""
from __future__ import annotations

import os
from typing import Optional

from fe_core.dataset.csv_dataset import CSVDataset
from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.dir_dataset import list_files
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data"]

URL = "http://openi.nlm.nih.gov/imgs/collections/NLM-MontgomeryCXRSet.zip"


@fe_export("fe.dataset.data.montgomery.load_data")
def load_data(root_dir: Optional[str] = None) -> CSVDataset:
    """Load and return the montgomery dataset.

    Sourced from http://openi.nlm.nih.gov/imgs/collections/NLM-MontgomeryCXRSet.zip. This method will download the
    data to local storage if the data has not been previously downloaded.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        train_data: a CSVDataset with "image", "mask_left", "mask_right" paths relative to `parent_path`.
    """
    pandas = import_optional("pandas", extra="table", feature="montgomery.load_data")
    directory = data_dir(root_dir, "Montgomery")
    fetch_and_extract(URL, directory, expected=["MontgomerySet"],
                      members=lambda name: name.startswith("MontgomerySet/"))
    csv_path = os.path.join(directory, "montgomery.csv")
    if not os.path.exists(csv_path):
        images = [os.path.relpath(path, directory) for path in
                  list_files(os.path.join(directory, "MontgomerySet", "CXR_png"), ".png", recursive_search=False)]
        frame = pandas.DataFrame({"image": images})
        frame["mask_left"] = [path.replace("CXR_png", os.path.join("ManualMask", "leftMask")) for path in images]
        frame["mask_right"] = [path.replace("CXR_png", os.path.join("ManualMask", "rightMask")) for path in images]
        frame.to_csv(csv_path + ".tmp", index=False)
        os.replace(csv_path + ".tmp", csv_path)
    return CSVDataset(csv_path)
