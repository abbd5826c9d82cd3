"""WikiText-103 (raw), as the parquet files hosted by Hugging Face."""
from __future__ import annotations

import os
from typing import Optional, Tuple

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.export import fe_export

__all__ = ["load_data", "download_file"]

BASE_URL = "https://huggingface.co/datasets/wikitext/resolve/main/wikitext-103-raw-v1/"


@fe_export("fe.dataset.data.wikitext_103.download_file")
def download_file(file_path: str, output_dir: str) -> str:
    """Download `file_path` (a URL) into `output_dir` unless it is already there.

    Args:
        file_path: The URL.
        output_dir: The directory.

    Returns:
        The local file path.
    """
    os.makedirs(output_dir, exist_ok=True)
    return fetch(file_path, output_dir)


@fe_export("fe.dataset.data.wikitext_103.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[str, str, str]:
    """Download Wikitext-103 data and return its downloaded file path.

    The training data contains 28475 wiki articles, 103 million tokens. The evaluation contains 60 wiki articles and
    240k tokens. The files come from Hugging Face datasets as parquet; only the first half of the training data
    (900k rows) is provided, for simplicity.

    Args:
        root_dir: Download parent path. Defaults to None (`~/fastestimator_data` or `$FE_DATA_DIR`).

    Returns:
        Tuple[str, str, str]: the file path for train, eval and test split.
    """
    directory = data_dir(root_dir, "wiki_text_103")
    test = download_file(BASE_URL + "test-00000-of-00001.parquet", directory)
    evaluation = download_file(BASE_URL + "validation-00000-of-00001.parquet", directory)
    train = download_file(BASE_URL + "train-00000-of-00002.parquet", directory)
    return train, evaluation, test
