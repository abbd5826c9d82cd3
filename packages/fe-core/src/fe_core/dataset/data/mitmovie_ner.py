"""MIT Movie corpus (https://groups.csail.mit.edu/sls/downloads/movie/): movie queries tagged in BIO format."""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data", "get_sentences_and_labels"]

BASE_URL = "https://groups.csail.mit.edu/sls/downloads/movie/"


@fe_export("fe.dataset.data.mitmovie_ner.get_sentences_and_labels")
def get_sentences_and_labels(path: str) -> Tuple[List[str], List[List[str]], Set[str], Set[str]]:
    """Combines tokens into sentences and create vocab set for train data and labels.

    Each line holds a tag and a token separated by whitespace; a blank line ends a sentence.

    Args:
        path: Path to the downloaded dataset file.

    Returns:
        (sentences, labels, train_vocab, label_vocab)
    """
    sentences: List[str] = []
    labels: List[List[str]] = []
    word_vocab: Set[str] = set()
    label_vocab: Set[str] = set()
    words: List[str] = []
    tags: List[str] = []
    with open(path, encoding="utf-8") as stream:
        for line in list(stream) + ["\n"]:
            parts = line.split()
            if len(parts) >= 2:
                tags.append(parts[0])
                words.append(parts[1])
                label_vocab.add(parts[0])
                word_vocab.add(parts[1])
            elif words:
                sentences.append(" ".join(words))
                labels.append(list(tags))
                words, tags = [], []
    return sentences, labels, word_vocab, label_vocab


@fe_export("fe.dataset.data.mitmovie_ner.load_data")
def load_data(root_dir: Optional[str] = None) -> Tuple[NumpyDataset, NumpyDataset, Set[str], Set[str]]:
    """Load and return the MIT Movie dataset.

    MIT Movies dataset is a semantically tagged training and test corpus in BIO format. The sentence is encoded as one
    token per line with information provided in tab-separated columns.
    Sourced from https://groups.csail.mit.edu/sls/downloads/movie/

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        (train_data, eval_data, train_vocab, label_vocab): "x" holds sentences (str), "y" lists of tags.
    """
    directory = data_dir(root_dir, "MITMovie")
    train_path = fetch(BASE_URL + "engtrain.bio", directory)
    test_path = fetch(BASE_URL + "engtest.bio", directory)
    x_train, y_train, x_vocab, y_vocab = get_sentences_and_labels(train_path)
    x_eval, y_eval, x_eval_vocab, y_eval_vocab = get_sentences_and_labels(test_path)
    x_vocab |= x_eval_vocab
    y_vocab |= y_eval_vocab

    def tags(rows: List[List[str]]) -> np.ndarray:
        column = np.empty(len(rows), dtype=object)
        for index, row in enumerate(rows):
            column[index] = row
        return column

    return (NumpyDataset({"x": np.array(x_train), "y": tags(y_train)}),
            NumpyDataset({"x": np.array(x_eval), "y": tags(y_eval)}), x_vocab, y_vocab)
