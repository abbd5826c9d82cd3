"""The complete works of Shakespeare as one text (character-level language modelling)."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

URL = "https://storage.googleapis.com/download.tensorflow.org/data/shakespeare.txt"


@fe_export("fe.dataset.data.shakespeare.load_data")
def load_data(root_dir: Optional[str] = None, seq_length: int = 100) -> Tuple[NumpyDataset, List[str]]:
    """Load and return the Shakespeare dataset.

    Shakespeare dataset is a collection of texts written by Shakespeare.
    Sourced from https://storage.googleapis.com/download.tensorflow.org/data/shakespeare.txt. Characters are mapped
    to indices of the sorted character vocabulary; the text is padded with index 0 to a multiple of `seq_length`.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        seq_length: Length of data sequence.

    Returns:
        (train_data, vocab)
    """
    path = fetch(URL, data_dir(root_dir, "Shakespeare"))
    with open(path, "rb") as stream:
        text = stream.read().decode("utf-8")
    vocab = sorted(set(text))
    index = {char: position for position, char in enumerate(vocab)}
    ids = [index[char] for char in text] + [0] * (seq_length - len(text) % seq_length)
    return NumpyDataset({"x": np.asarray(ids, dtype=np.int64).reshape(-1, seq_length)}), vocab
