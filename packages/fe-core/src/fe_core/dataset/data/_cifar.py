"""Reading CIFAR-format 'python version' batch files (used by cifar10, cifar100, cifair10, cifair100)."""
from __future__ import annotations

import os
from typing import List, Tuple

import numpy as np

from fe_core.dataset.data._safe_pickle import load_numpy_pickle

__all__ = ["read_batches"]


def _read_batch(path: str, label_key: str) -> Tuple[np.ndarray, np.ndarray]:
    with open(path, "rb") as stream:
        content = load_numpy_pickle(stream, encoding="bytes")
    content = {key.decode("utf-8") if isinstance(key, bytes) else key: value for key, value in content.items()}
    if label_key not in content:
        raise KeyError(f"{path} has no {label_key!r} entry (entries: {sorted(content)})")
    images = np.asarray(content["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
    return images, np.asarray(content[label_key], dtype=np.uint8)


def read_batches(folder: str, names: List[str], label_key: str, channels_last: bool = True
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """Concatenate CIFAR batch files.

    Args:
        folder: The folder holding them.
        names: The batch file names, in order.
        label_key: 'labels' (CIFAR-10), 'fine_labels' or 'coarse_labels' (CIFAR-100).
        channels_last: Return images as (N, 32, 32, 3) (else (N, 3, 32, 32)).

    Returns:
        (uint8 images, uint8 labels of shape (N, 1)).
    """
    parts = [_read_batch(os.path.join(folder, name), label_key) for name in names]
    images = np.concatenate([part[0] for part in parts])
    labels = np.concatenate([part[1] for part in parts]).reshape(-1, 1)
    if channels_last:
        images = np.ascontiguousarray(images.transpose(0, 2, 3, 1))
    return images, labels
