"""Torch shapes and indexing behind `fe_core.backend.shapes` (images and volumes are channels first)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["CHANNELS_FIRST", "get_shape", "reshape", "expand_dims", "squeeze", "permute", "transpose", "flip", "roll",
           "concat", "gather", "gather_from_batch", "resize_3d", "to_numpy"]

CHANNELS_FIRST = True


def get_shape(tensor: torch.Tensor) -> Tuple[int, ...]:
    """The torch case of `fe.backend.get_shape`."""
    return tuple(tensor.shape)


def reshape(tensor: torch.Tensor, shape: List[int]) -> torch.Tensor:
    """The torch case of `fe.backend.reshape`."""
    return torch.reshape(tensor, shape)


def expand_dims(tensor: torch.Tensor, axis: int) -> torch.Tensor:
    """The torch case of `fe.backend.expand_dims`."""
    return torch.unsqueeze(tensor, axis)


def squeeze(tensor: torch.Tensor, axis: Optional[int]) -> torch.Tensor:
    """The torch case of `fe.backend.squeeze`."""
    return torch.squeeze(tensor) if axis is None else torch.squeeze(tensor, axis)


def permute(tensor: torch.Tensor, permutation: List[int]) -> torch.Tensor:
    """The torch case of `fe.backend.permute`."""
    return tensor.permute(*permutation)


def transpose(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.transpose`."""
    return tensor.permute(*range(tensor.ndim - 1, -1, -1))


def flip(tensor: torch.Tensor, axes: List[int]) -> torch.Tensor:
    """The torch case of `fe.backend.flip`."""
    return torch.flip(tensor, axes)


def roll(tensor: torch.Tensor, shift: Union[int, List[int]], axis: Union[int, List[int]]) -> torch.Tensor:
    """The torch case of `fe.backend.roll`."""
    return torch.roll(tensor, shift, axis)


def concat(tensors: Sequence[torch.Tensor], axis: int) -> torch.Tensor:
    """The torch case of `fe.backend.concat`."""
    return torch.cat(list(tensors), dim=axis)


def _indices(indices: Any, device: torch.device) -> torch.Tensor:
    if isinstance(indices, torch.Tensor):
        indices = indices.to(device)
    else:
        indices = torch.as_tensor(np.asarray(indices.numpy() if hasattr(indices, "numpy") else indices),
                                  device=device)
    return indices if indices.dtype in (torch.int64, torch.int32) else indices.long()


def gather(tensor: torch.Tensor, indices: Any) -> torch.Tensor:
    """The torch case of `fe.backend.gather`."""
    return tensor[_indices(indices, tensor.device).squeeze()]


def gather_from_batch(tensor: torch.Tensor, indices: Any) -> torch.Tensor:
    """The torch case of `fe.backend.gather_from_batch`."""
    index = _indices(indices, tensor.device).reshape(-1)
    return tensor[torch.arange(index.shape[0], device=tensor.device), index]


def resize_3d(tensor: torch.Tensor, output_shape: List[int], resize_mode: str) -> torch.Tensor:
    """The torch case of `fe.backend.resize_3d`."""
    half_on_cpu = tensor.device.type == "cpu" and tensor.dtype in (torch.float16, torch.bfloat16)
    source = tensor.float() if half_on_cpu or not tensor.is_floating_point() else tensor
    resized = F.interpolate(source, size=tuple(output_shape), mode=resize_mode)
    return resized.to(tensor.dtype) if resized.dtype != tensor.dtype else resized


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """`value` as a numpy array (detached, on the host)."""
    return tensor.detach().cpu().numpy()
