"""scikit-learn's 8x8 handwritten digits (1797 images)."""
from __future__ import annotations

from fe_core.dataset.data._sklearn_data import sklearn_table
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export

__all__ = ["load_data"]


@fe_export("fe.dataset.data.skl_digits.load_data")
def load_data(image_key: str = "x", label_key: str = "y") -> NumpyDataset:
    """Load and return the Sklearn digits dataset.

    Args:
        image_key: The key for image.
        label_key: The key for label.

    Returns:
        One NumpyDataset: images float64 (8, 8) with values 0..16, labels int64 0..9.
    """
    features, targets = sklearn_table("digits.csv.gz", header_rows=0)
    return NumpyDataset({image_key: features.reshape(-1, 8, 8), label_key: targets})
