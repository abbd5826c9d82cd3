"""Torch tensors shaped like others, behind `fe_core.backend.creation` (on the device of the given tensor)."""
from __future__ import annotations

from typing import Any, Optional

import torch

__all__ = ["torch_dtype", "zeros_like", "ones_like", "random_normal_like", "random_uniform_like"]


def torch_dtype(dtype: Any) -> Optional[torch.dtype]:
    """A torch dtype from a name ('float32'), a torch dtype, or None."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = str(getattr(dtype, "name", dtype))
    result = getattr(torch, name, None)
    if not isinstance(result, torch.dtype):
        raise ValueError(f"fe.backend: {dtype!r} is not a torch data type")
    return result


def zeros_like(tensor: torch.Tensor, dtype: Any) -> torch.Tensor:
    """The torch case of `fe.backend.zeros_like`."""
    return torch.zeros_like(tensor, dtype=torch_dtype(dtype))


def ones_like(tensor: torch.Tensor, dtype: Any) -> torch.Tensor:
    """The torch case of `fe.backend.ones_like`."""
    return torch.ones_like(tensor, dtype=torch_dtype(dtype))


def random_normal_like(tensor: torch.Tensor, mean: float, std: float, dtype: Any) -> torch.Tensor:
    """The torch case of `fe.backend.random_normal_like`."""
    return torch.randn(tensor.shape, dtype=torch_dtype(dtype), device=tensor.device) * std + mean


def random_uniform_like(tensor: torch.Tensor, minval: float, maxval: float, dtype: Any) -> torch.Tensor:
    """The torch case of `fe.backend.random_uniform_like`."""
    return torch.rand(tensor.shape, dtype=torch_dtype(dtype), device=tensor.device) * (maxval - minval) + minval
