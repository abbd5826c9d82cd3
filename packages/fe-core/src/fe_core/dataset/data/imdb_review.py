"""IMDB movie reviews (25000 train, 25000 test) as word-index sequences, from the imdb.npz Keras publishes."""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch
from fe_core.dataset.data._safe_pickle import load_npz_with_objects
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data", "pad"]

URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb.npz"
SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
_SEED, _START, _OOV, _INDEX_FROM = 113, 1, 2, 3  # the Keras conventions FastEstimator's models were trained with


@fe_export("fe.dataset.data.imdb_review.pad")
def pad(input_list: List[int], padding_size: int, padding_value: int) -> List[int]:
    """Pad an input_list to a given size.

    Args:
        input_list: The list to be padded.
        padding_size: The desired length of the returned list.
        padding_value: The value to be inserted for padding.

    Returns:
        `input_list` with `padding_value`s appended until the `padding_size` is reached.

    Example:
        >>> pad([1, 2], 4, 0)
        [1, 2, 0, 0]
    """
    return list(input_list) + [padding_value] * max(padding_size - len(input_list), 0)


def _prepare(sequences: np.ndarray, labels: np.ndarray, max_len: int, vocab_size: int,
             rng: np.random.RandomState) -> Tuple[np.ndarray, np.ndarray]:
    order = np.arange(len(sequences))
    rng.shuffle(order)
    encoded, kept_labels = [], []
    for index in order:
        words = [_START] + [int(word) + _INDEX_FROM for word in sequences[index]]
        if len(words) >= max_len:  # Keras drops sequences of max_len words or more
            continue
        encoded.append(pad([word if word < vocab_size else _OOV for word in words], max_len, 0))
        kept_labels.append(labels[index])
    return np.asarray(encoded, dtype=np.int64).reshape(-1, max_len), np.asarray(kept_labels, dtype=np.int64)


@fe_export("fe.dataset.data.imdb_review.load_data")
def load_data(max_len: int, vocab_size: int) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the IMDB Movie review dataset.

    This dataset contains 25,000 reviews labeled by sentiments (either positive or negative). Reviews are word-index
    sequences (1 marks the start, 2 an out-of-vocabulary word, words are indexed from 3 by frequency), shuffled as
    Keras does; reviews of `max_len` words or more are dropped and the others are padded with 0 to `max_len`.

    Args:
        max_len: Maximum desired length of an input sequence.
        vocab_size: Vocabulary size to learn word embeddings.

    Returns:
        (train_data, eval_data): "x" int64 (max_len,), "y" int64 0/1.
    """
    path = fetch(URL, data_dir(None, "IMDB"), checksum=SHA256, algorithm="sha256")
    arrays = load_npz_with_objects(path)
    rng = np.random.RandomState(_SEED)
    x_train, y_train = _prepare(arrays["x_train"], arrays["y_train"], max_len, vocab_size, rng)
    x_eval, y_eval = _prepare(arrays["x_test"], arrays["y_test"], max_len, vocab_size, rng)
    return NumpyDataset({"x": x_train, "y": y_train}), NumpyDataset({"x": x_eval, "y": y_eval})
