"""TED talks translation pairs (Qi et al., NAACL 2018: http://www.phontron.com/data/qi18naacl-dataset.tar.gz)."""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data", "TRANSLATE_OPTIONS"]

URL = "http://www.phontron.com/data/qi18naacl-dataset.tar.gz"
TRANSLATE_OPTIONS = ("az_to_en", "az_tr_to_en", "be_ru_to_en", "be_to_en", "es_to_pt", "fr_to_pt", "gl_pt_to_en",
                     "gl_to_en", "he_to_pt", "it_to_pt", "pt_to_en", "ru_to_en", "ru_to_pt", "tr_to_en")


def _lines(path: str) -> List[str]:
    with open(path, encoding="utf-8") as stream:
        return [line.strip() for line in stream if line.strip()]


def _pairs(folder: str, translate_option: str, split: str) -> NumpyDataset:
    source, target = translate_option.split("_to_")
    source = source.replace("_", "-")
    if split != "train":  # only the training data mixes in the helper language
        source = source.split("-")[0]
    sources = _lines(os.path.join(folder, f"{source}.{split}"))
    targets = _lines(os.path.join(folder, f"{target}.{split}"))
    if len(sources) != len(targets):
        raise ValueError(f"tednmt {translate_option} {split}: {len(sources)} source lines but {len(targets)} targets")
    return NumpyDataset({"source": sources, "target": targets})


@fe_export("fe.dataset.data.tednmt.load_data")
def load_data(root_dir: Optional[str] = None,
              translate_option: str = "az_to_en") -> Tuple[NumpyDataset, NumpyDataset, NumpyDataset]:
    """Load and return the neural machine translation dataset from TED talks.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        translate_option: Options for translation languages. Available options are: "az_to_en", "az_tr_to_en",
            "be_ru_to_en", "be_to_en", "es_to_pt", "fr_to_pt", "gl_pt_to_en", "gl_to_en", "he_to_pt", "it_to_pt",
            "pt_to_en", "ru_to_en", "ru_to_pt", and "tr_to_en".

    Returns:
        (train_data, eval_data, test_data): "source" and "target" sentences.

    Raises:
        ValueError: If `translate_option` is not one of the options.
    """
    if translate_option not in TRANSLATE_OPTIONS:
        raise ValueError(f"tednmt translate_option must be one of {list(TRANSLATE_OPTIONS)}, got {translate_option!r}")
    directory = data_dir(root_dir, "tednmt")
    fetch_and_extract(URL, directory, expected=["datasets"])
    folder = os.path.join(directory, "datasets", translate_option)
    return (_pairs(folder, translate_option, "train"), _pairs(folder, translate_option, "dev"),
            _pairs(folder, translate_option, "test"))
