"""Heat maps for the explanation traces, in numpy: resizing, a jet colour map, overlays, and sample collection.

GradCAM, EigenCAM and Saliency all turn a low-resolution map into a coloured overlay on the input image, and all keep
only the first `n_samples` samples of an epoch; those shared pieces live here.
"""
from __future__ import annotations

import io
from typing import Any, Dict, List, Optional

import numpy as np

from fe_core.distributed.communicator import get_communicator

__all__ = ["resize_bilinear", "normalize_map", "jet", "overlay", "SampleCollector", "class_names"]


def resize_bilinear(maps: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize maps (..., h, w) to (..., height, width) by bilinear interpolation (pixel centres aligned).

    Example:
        >>> resize_bilinear(np.array([[0.0, 1.0]]), 1, 4).round(2).tolist()
        [[0.0, 0.25, 0.75, 1.0]]
    """
    maps = np.asarray(maps, dtype=np.float64)
    h, w = maps.shape[-2:]

    def _coords(out: int, size: int) -> tuple:
        pos = np.clip((np.arange(out) + 0.5) * size / out - 0.5, 0, size - 1)
        low = np.floor(pos).astype(int)
        high = np.minimum(low + 1, size - 1)
        return low, high, pos - low

    y0, y1, fy = _coords(height, h)
    x0, x1, fx = _coords(width, w)
    rows = maps[..., y0, :] * (1 - fy)[:, None] + maps[..., y1, :] * fy[:, None]
    return rows[..., x0] * (1 - fx) + rows[..., x1] * fx


def normalize_map(maps: np.ndarray) -> np.ndarray:
    """Min-max scale each map of a batch (N, H, W) to [0, 1] (a constant map becomes zeros)."""
    maps = np.asarray(maps, dtype=np.float64)
    low = maps.min(axis=(-2, -1), keepdims=True)
    span = maps.max(axis=(-2, -1), keepdims=True) - low
    return np.where(span > 0, (maps - low) / np.where(span > 0, span, 1.0), 0.0)


def jet(values: np.ndarray) -> np.ndarray:
    """The jet colour map: values in [0, 1] (any shape) to RGB in [0, 1] (shape + (3,)); 0 is dark blue, 1 dark red.

    Example:
        >>> jet(np.array([0.0, 1.0])).round(2).tolist()
        [[0.0, 0.0, 0.5], [0.5, 0.0, 0.0]]
    """
    v = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)[..., None]
    centers = np.array([0.75, 0.5, 0.25])  # where red, green and blue peak
    return np.clip(1.5 - np.abs(4.0 * (v - centers)), 0.0, 1.0)


def _image_unit(images: np.ndarray) -> np.ndarray:
    """Images (N, H, W, C) scaled to [0, 1] per image, as RGB."""
    images = np.asarray(images, dtype=np.float64)
    if images.shape[-1] == 1:
        images = np.repeat(images, 3, axis=-1)
    low = images.min(axis=(1, 2, 3), keepdims=True)
    span = images.max(axis=(1, 2, 3), keepdims=True) - low
    return np.where(span > 0, (images - low) / np.where(span > 0, span, 1.0), np.clip(images, 0.0, 1.0))


def overlay(images: np.ndarray, maps: np.ndarray, alpha: float = 0.5) -> np.ndarray:
    """Jet-coloured maps (N, h, w) blended over channels-last images (N, H, W, C); returns float RGB in [0, 1].

    The maps are resized to the images and min-max scaled per image; the blend is rescaled so that each picture's
    brightest value is 1.
    """
    height, width = images.shape[1:3]
    heat = jet(normalize_map(resize_bilinear(maps, height, width)))
    blend = (1 - alpha) * _image_unit(images) + alpha * heat
    peak = blend.max(axis=(1, 2, 3), keepdims=True)
    return np.clip(blend / np.where(peak > 0, peak, 1.0), 0.0, 1.0).astype(np.float32)


def class_names(values: Optional[np.ndarray], label_mapping: Optional[Dict[str, Any]]) -> Optional[List[str]]:
    """Class names for labels or predictions: indices (N,) or scores (N, C) (argmax), named through
    `label_mapping` ({name: value}) when given."""
    if values is None:
        return None
    values = np.asarray(values)
    if values.ndim > 1 and values.shape[-1] > 1:
        values = np.argmax(values, axis=-1)
    values = values.reshape(values.shape[0], -1)[:, 0]
    names = {}
    if label_mapping:
        names = {np.asarray(value).item(): str(name) for name, value in label_mapping.items()}
    return [names.get(value.item(), str(value.item())) for value in values]


class SampleCollector:
    """Keeps the first `n_samples` rows of some keys over an epoch (all rows when `n_samples` is None).

    Args:
        keys: The keys to collect.
        n_samples: How many samples to keep.
    """

    def __init__(self, keys: List[str], n_samples: Optional[int]) -> None:
        self.keys = [key for key in keys if key]
        self.n_samples = n_samples
        self.parts: Dict[str, List[np.ndarray]] = {key: [] for key in self.keys}
        self.count = 0

    def reset(self) -> None:
        """Forget what was collected."""
        self.parts = {key: [] for key in self.keys}
        self.count = 0

    @property
    def full(self) -> bool:
        """Whether `n_samples` samples were collected."""
        return self.n_samples is not None and self.count >= self.n_samples

    def add(self, data: Any) -> None:
        """Take rows from a batch (a mapping holding the keys) until `n_samples` are kept."""
        if self.full:
            return
        first = np.asarray(data[self.keys[0]])
        take = first.shape[0] if self.n_samples is None else min(first.shape[0], self.n_samples - self.count)
        for key in self.keys:
            self.parts[key].append(np.array(np.asarray(data[key])[:take]))
        self.count += take

    def gather(self) -> None:
        """In a data-parallel run, keep what one process would have kept: every rank's rows, batch by batch in the
        global order (rank 0's part of a batch, then rank 1's, ...), cut to `n_samples`. The same on every rank;
        nothing changes in a single process. A collective: every rank calls it at the same point."""
        communicator = get_communicator()
        if communicator.world_size == 1:
            return
        buffer = io.BytesIO()
        np.savez(buffer, **{f"k{i}_p{j}": part for i, key in enumerate(self.keys)
                            for j, part in enumerate(self.parts[key])})
        ranks = []
        for blob in communicator.all_gather_bytes(buffer.getvalue()):
            with np.load(io.BytesIO(blob), allow_pickle=False) as arrays:
                count = sum(1 for name in arrays.files if name.startswith("k0_"))
                ranks.append([{key: arrays[f"k{i}_p{j}"] for i, key in enumerate(self.keys)} for j in range(count)])
        self.reset()
        for index in range(max(len(parts) for parts in ranks)):
            for parts in ranks:
                if index < len(parts):
                    self.add(parts[index])

    def get(self, key: str) -> Optional[np.ndarray]:
        """The collected rows of `key` (None when nothing was collected)."""
        parts = self.parts.get(key) or []
        return np.concatenate(parts, axis=0) if parts else None
