"""Devices, and moving batches between numpy (host) and torch tensors (device).

fe trains on one device: the first CUDA GPU when there is one, else the CPU. Batches come from the Pipeline as numpy
arrays (or as torch tensors from a native `DataLoader`); `to_device` turns them into tensors on the device without a
copy when the device is the CPU, and `to_numpy` brings predictions back for traces.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

__all__ = ["default_device", "num_devices", "model_device", "to_device", "to_numpy", "standard_layout",
           "NUMERIC_KINDS"]

_LOW_PRECISION = (torch.float16, torch.bfloat16)
NUMERIC_KINDS = "biufc"  #: numpy dtype kinds that become tensors (not strings, objects, datetimes)


def default_device() -> torch.device:
    """The device fe trains on: `cuda:0` when CUDA is available, else the CPU (in a data-parallel run under
    torchrun: this process's `cuda:<LOCAL_RANK>`, see `fe_torch.distributed`).

    Example:
        >>> default_device().type in ("cuda", "cpu")
        True
    """
    from fe_torch import distributed  # pylint: disable=import-outside-toplevel
    if distributed.device() is not None:
        return distributed.device()
    return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


def num_devices() -> int:
    """How many accelerators fe trains on: 1 with CUDA (training uses one GPU), 0 on the CPU."""
    return 1 if torch.cuda.is_available() else 0


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of a model's first parameter or buffer (the default device for a model without any)."""
    for tensor in model.parameters():
        return tensor.device
    for tensor in model.buffers():
        return tensor.device
    return default_device()


def standard_layout(array: np.ndarray) -> np.ndarray:
    """`array` with row-major (C-order) strides, as a batch collated by `np.stack` has.

    A batch that a whole-batch op transposed can be a strided view, and a C-contiguous array may still carry odd
    strides on its size-1 axes (`(N, 28, 28, 1)` transposed to `(N, 1, 28, 28)`): torch reads either as a
    channels-last tensor, its convolutions then return channels-last outputs and `.view(...)` fails on them. A view
    is copied; odd strides on size-1 axes are replaced without a copy. Ordinary batches are returned as they are.

    Example:
        >>> standard_layout(np.zeros((2, 3, 3, 1), np.float32).transpose(0, 3, 1, 2)).strides
        (36, 36, 12, 4)
    """
    if not array.flags.c_contiguous:
        return np.ascontiguousarray(array)
    shape = array.shape
    if 1 not in shape:
        return array
    strides, step = [], array.itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size
    strides.reverse()
    if tuple(strides) == array.strides:
        return array
    return np.lib.stride_tricks.as_strided(array, strides=strides, writeable=array.flags.writeable)


PIN_BYTES = 64 * 1024  # arrays from this size go to a CUDA device through pinned (page-locked) host memory


def _array_to_tensor(array: np.ndarray) -> Optional[torch.Tensor]:
    if array.dtype.kind not in NUMERIC_KINDS:  # strings, objects, datetimes: not tensors
        return None
    if not array.flags.writeable:  # torch.from_numpy warns on (and would share) read-only memory
        array = array.copy()
    return torch.from_numpy(standard_layout(array))


def to_device(data: Any, device: torch.device) -> Any:
    """Convert (nested) numpy arrays, numpy/python numbers and torch tensors to tensors on `device`.

    On the CPU numpy arrays are wrapped without a copy. Values that are not numeric (strings, object arrays) are
    returned unchanged. Dicts, lists and tuples are converted element-wise.

    Args:
        data: The value(s) to convert.
        device: The target device.

    Returns:
        The same structure holding tensors on `device`.

    Example:
        >>> to_device({"x": np.ones((2, 3), dtype=np.float32)}, torch.device("cpu"))["x"].shape
        torch.Size([2, 3])
    """
    if type(data) is np.ndarray and device.type == "cpu" and data.dtype.kind in NUMERIC_KINDS \
            and data.flags.writeable:
        return torch.from_numpy(standard_layout(data))  # the common case first: a batch wrapped without a copy
    if isinstance(data, torch.Tensor):
        return data if data.device == device else data.to(device, non_blocking=True)
    if isinstance(data, np.ndarray):
        tensor = _array_to_tensor(data)
        if tensor is None:
            return data
        if device.type == "cpu":
            return tensor
        if device.type == "cuda" and tensor.numel() * tensor.element_size() >= PIN_BYTES:
            tensor = tensor.pin_memory()  # page-locked: the copy below then runs asynchronously, overlapping the step
        return tensor.to(device, non_blocking=True)
    if isinstance(data, (np.generic, bool, int, float)) and not isinstance(data, (np.str_, np.bytes_, np.void)):
        return torch.as_tensor(np.asarray(data), device=device)
    if isinstance(data, dict):
        return {key: to_device(value, device) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(to_device(value, device) for value in data)
    return data


def to_numpy(data: Any) -> Any:
    """Convert (nested) torch tensors to numpy arrays on the host.

    Tensors are detached and copied to the CPU; float16 and bfloat16 become float32 (numpy has no bfloat16). Dicts,
    lists and tuples are converted element-wise; anything else is returned unchanged.

    Example:
        >>> to_numpy({"y": torch.tensor([1.5], dtype=torch.bfloat16)})["y"].dtype
        dtype('float32')
    """
    if isinstance(data, torch.Tensor):
        tensor = data.detach().cpu()  # copy first: a half-precision tensor crosses the bus at half the size
        if tensor.dtype in _LOW_PRECISION:
            tensor = tensor.float()
        return tensor.numpy()
    if isinstance(data, dict):
        return {key: to_numpy(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(to_numpy(value) for value in data)
    return data
