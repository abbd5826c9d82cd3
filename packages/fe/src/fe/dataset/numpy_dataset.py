"""`NumpyDataset`: a dataset of in-memory arrays."""
from fe_core.dataset.numpy_dataset import NumpyDataset

__all__ = ["NumpyDataset"]
