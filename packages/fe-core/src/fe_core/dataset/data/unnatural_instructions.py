"""Unnatural Instructions (https://github.com/orhonovich/unnatural-instructions): 68478 instruction/output pairs."""
from __future__ import annotations

import os
from typing import Optional

from fe_core.dataset.data._download import data_dir, fetch_and_extract
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://github.com/orhonovich/unnatural-instructions/raw/main/data/core_data.zip"


@fe_export("fe.dataset.data.unnatural_instructions.load_data")
def load_data(root_dir: Optional[str] = None) -> str:
    """Download Unnatural Instruction tuning data and return its downloaded file path.

    The data contains 68,478 instruction-output pairs. More in https://github.com/orhonovich/unnatural-instructions.

    Args:
        root_dir: Download parent path. Defaults to None (`~/fastestimator_data` or `$FE_DATA_DIR`).

    Returns:
        str: Json file path.
    """
    directory = data_dir(root_dir, "unnatural_instructions")
    fetch_and_extract(URL, directory, expected=["core_data.jsonl"])
    return os.path.join(directory, "core_data.jsonl")
