"""Where the channel axis of an image batch is, for traces that see only numpy arrays.

Traces receive predictions as numpy arrays, so they cannot tell a torch (channels first) batch from a TensorFlow
(channels last) one by its type. The run's framework says which: `channels_first(system)` is True when the run's
Network belongs to the torch backend. Without a network (a trace driven by hand), an array whose axis 1 has 1 or 3
entries while its last axis does not is taken as channels first.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

__all__ = ["channels_first", "to_channels_last"]


def channels_first(system: Any, batch: Optional[np.ndarray] = None) -> bool:
    """Whether image batches of this run put channels on axis 1 (torch) rather than last (TensorFlow, numpy).

    Args:
        system: The run's System (may be None).
        batch: An example batch (N, ., ., .) used when the run's framework is unknown.

    Returns:
        True for channels-first batches.

    Example:
        >>> channels_first(None, np.zeros((2, 3, 8, 8)))
        True
        >>> channels_first(None, np.zeros((2, 8, 8, 3)))
        False
    """
    backend = getattr(getattr(system, "network", None), "backend", None)
    name = getattr(backend, "name", None)
    if name:
        return name == "torch"
    if batch is not None and np.ndim(batch) == 4:
        shape = np.shape(batch)
        return shape[1] in (1, 3) and shape[-1] not in (1, 3)
    return False


def to_channels_last(batch: np.ndarray, system: Any = None) -> np.ndarray:
    """An image batch (N, H, W[, C]) or (N, C, H, W) as channels-last (N, H, W, C) numpy.

    Args:
        batch: The images.
        system: The run's System, to know the framework's layout.

    Returns:
        A (N, H, W, C) array (C = 1 for grey images given as (N, H, W)).
    """
    batch = np.asarray(batch)
    if batch.ndim == 3:
        return batch[..., None]
    if batch.ndim == 4 and channels_first(system, batch):
        return np.moveaxis(batch, 1, -1)
    return batch
