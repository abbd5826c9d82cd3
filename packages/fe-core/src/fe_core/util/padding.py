"""Padding ragged samples to a common shape: `pad_data` (one array) and `pad_batch` (a list of samples, in place)."""
from __future__ import annotations

from typing import List, MutableMapping, Tuple, Union

import numpy as np

from fe_core.export import fe_export

__all__ = ["pad_data", "pad_batch"]


@fe_export("fe.util.util.pad_data", "fe.util.pad_data")
def pad_data(data: np.ndarray, target_shape: Tuple[int, ...], pad_value: Union[float, int]) -> np.ndarray:
    """Pad `data` by appending `pad_value`s at the end of each dimension until the `target_shape` is reached.

    Example:
        >>> pad_data(np.ones((1, 2)), target_shape=(3, 3), pad_value=-2)
        array([[ 1.,  1., -2.],
               [-2., -2., -2.],
               [-2., -2., -2.]])

    Args:
        data: The data to be padded.
        target_shape: The desired shape for `data`. Should have the same rank as `data`, with each dimension being >=
            the size of the `data` dimension.
        pad_value: The value to insert into `data` if padding is required to achieve the `target_shape`.

    Returns:
        The `data`, padded to the `target_shape` (the same array when no padding is needed).

    Raises:
        ValueError: If the ranks differ or a target dimension is smaller than the data's.
    """
    data = np.asarray(data)
    target = tuple(int(dim) for dim in target_shape)
    if len(target) != data.ndim:
        raise ValueError(f"pad_data: target_shape {target} has rank {len(target)} but the data has shape "
                         f"{data.shape} (rank {data.ndim})")
    growth = [want - have for want, have in zip(target, data.shape)]
    if any(extra < 0 for extra in growth):
        raise ValueError(f"pad_data: target_shape {target} is smaller than the data's shape {data.shape}")
    if not any(growth):
        return data
    return np.pad(data, [(0, extra) for extra in growth], mode="constant", constant_values=pad_value)


@fe_export("fe.util.util.pad_batch", "fe.util.pad_batch")
def pad_batch(batch: List[MutableMapping[str, np.ndarray]], pad_value: Union[float, int]) -> None:
    """Pad a batch of samples in place so each key's numpy arrays share one shape (the elementwise maximum).

    Only numpy arrays are padded; values without a shape (python numbers, strings) are left as they are.

    Example:
        >>> data = [{"x": np.ones((2, 2)), "y": 8}, {"x": np.ones((3, 1)), "y": 4}]
        >>> pad_batch(data, pad_value=0)
        >>> data[0]["x"].tolist(), data[1]["x"].tolist()
        ([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])

    Args:
        batch: A list of samples (dicts) to be padded.
        pad_value: The value to pad with.

    Raises:
        AssertionError: If the data within the batch do not have matching rank, or have different keys.
    """
    if not batch:
        return
    keys = set(batch[0].keys())
    for index, sample in enumerate(batch):
        if set(sample.keys()) != keys:
            raise AssertionError(f"pad_batch: sample {index} has keys {sorted(sample.keys())} but sample 0 has "
                                 f"{sorted(keys)}; every sample of a batch needs the same keys")
    for key in keys:
        shapes = [sample[key].shape for sample in batch if isinstance(sample[key], np.ndarray)]
        if len(set(shapes)) <= 1:
            continue
        ranks = {len(shape) for shape in shapes}
        if len(ranks) > 1:
            raise AssertionError(f"pad_batch: key {key!r} holds arrays of different ranks {sorted(set(shapes))}; "
                                 "only arrays of the same rank can be padded to a common shape")
        target = tuple(np.max(np.array(shapes), axis=0))
        for sample in batch:
            if isinstance(sample[key], np.ndarray):
                sample[key] = pad_data(sample[key], target, pad_value)
