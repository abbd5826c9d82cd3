"""The small tables scikit-learn ships (digits, breast cancer): read from an installed scikit-learn when there is one,
else downloaded once from scikit-learn's repository. Parsed with numpy either way; scikit-learn is never required."""
from __future__ import annotations

import gzip
import os
from typing import Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, fetch

__all__ = ["sklearn_table", "shuffle_split"]

_BASE = "https://raw.githubusercontent.com/scikit-learn/scikit-learn/1.5.2/sklearn/datasets/data/"


def _bundled(file_name: str) -> str:
    """The file inside an installed scikit-learn, or ''."""
    try:
        import importlib.util
        spec = importlib.util.find_spec("sklearn")
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.submodule_search_locations:
        return ""
    path = os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data", file_name)
    return path if os.path.exists(path) else ""


def sklearn_table(file_name: str, header_rows: int) -> Tuple[np.ndarray, np.ndarray]:
    """Features and integer targets (last column) of one of scikit-learn's bundled CSV files.

    Args:
        file_name: 'digits.csv.gz' or 'breast_cancer.csv'.
        header_rows: Rows to skip.

    Returns:
        (features as float64, targets as int64).
    """
    path = _bundled(file_name) or fetch(_BASE + file_name, data_dir(None, "sklearn"))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as stream:
        table = np.loadtxt(stream, delimiter=",", skiprows=header_rows)
    return table[:, :-1], table[:, -1].astype(np.int64)


def shuffle_split(size: int, test_fraction: float, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Train and test indices chosen as scikit-learn's `train_test_split(test_size=..., random_state=seed)` does.

    Returns:
        (train indices, test indices).
    """
    n_test = int(np.ceil(test_fraction * size))
    n_train = size - n_test
    permutation = np.random.RandomState(seed).permutation(size)
    return permutation[n_test:n_test + n_train], permutation[:n_test]
