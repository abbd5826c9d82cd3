"""The UCI ML Breast Cancer Wisconsin (Diagnostic) data set (569 samples, 30 features, 2 classes)."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from fe_core.dataset.data._sklearn_data import shuffle_split, sklearn_table
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]


@fe_export("fe.dataset.data.breast_cancer.load_data")
def load_data() -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the UCI ML Breast Cancer Wisconsin (Diagnostic) dataset.

    For more information about this dataset and the meaning of the features it contains, see the sklearn
    documentation. The 80/20 split is the one `train_test_split(test_size=0.2, random_state=42)` makes.

    Returns:
        (train_data, eval_data): "x" float32 (30,), "y" int64 (0 malignant, 1 benign).
    """
    features, targets = sklearn_table("breast_cancer.csv", header_rows=1)
    train, evaluation = shuffle_split(len(targets), 0.2, seed=42)
    return (NumpyDataset({"x": np.float32(features[train]), "y": targets[train]}),
            NumpyDataset({"x": np.float32(features[evaluation]), "y": targets[evaluation]}))
