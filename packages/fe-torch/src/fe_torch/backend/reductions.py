"""Torch reductions behind `fe_core.backend.reductions` (axis: None, an int or a tuple of ints)."""
from __future__ import annotations

from typing import List, Sequence, Tuple, Union

import torch

from fe_core.backend.reductions import percentile_index

__all__ = ["reduce_sum", "reduce_mean", "reduce_min", "reduce_max", "reduce_std", "argmax", "percentile", "check_nan"]

Axis = Union[None, int, Tuple[int, ...]]


def _keep_all(result: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    return result.reshape((1,) * tensor.ndim)


def reduce_sum(tensor: torch.Tensor, axis: Axis, keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.reduce_sum`."""
    if axis is None:
        return _keep_all(torch.sum(tensor), tensor) if keepdims else torch.sum(tensor)
    return torch.sum(tensor, dim=axis, keepdim=keepdims)


def reduce_mean(tensor: torch.Tensor, axis: Axis, keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.reduce_mean`."""
    if axis is None:
        return _keep_all(torch.mean(tensor), tensor) if keepdims else torch.mean(tensor)
    return torch.mean(tensor, dim=axis, keepdim=keepdims)


def reduce_min(tensor: torch.Tensor, axis: Axis, keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.reduce_min`."""
    if axis is None:
        return _keep_all(torch.min(tensor), tensor) if keepdims else torch.min(tensor)
    return torch.amin(tensor, dim=axis, keepdim=keepdims)


def reduce_max(tensor: torch.Tensor, axis: Axis, keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.reduce_max`."""
    if axis is None:
        return _keep_all(torch.max(tensor), tensor) if keepdims else torch.max(tensor)
    return torch.amax(tensor, dim=axis, keepdim=keepdims)


def reduce_std(tensor: torch.Tensor, axis: Axis, keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.reduce_std`."""
    if axis is None:
        return _keep_all(torch.std(tensor, correction=0), tensor) if keepdims else torch.std(tensor, correction=0)
    return torch.std(tensor, dim=axis, correction=0, keepdim=keepdims)


def argmax(tensor: torch.Tensor, axis: int) -> torch.Tensor:
    """The torch case of `fe.backend.argmax`."""
    return torch.argmax(tensor, dim=axis)


def _axes(axis: Axis, ndim: int) -> List[int]:
    if axis is None:
        return list(range(ndim))
    return sorted({a % ndim for a in ((axis,) if isinstance(axis, int) else axis)})


def percentile(tensor: torch.Tensor, percentiles: Union[int, float, Sequence[Union[int, float]]], axis: Axis,
               keepdims: bool) -> torch.Tensor:
    """The torch case of `fe.backend.percentile`."""
    single = not isinstance(percentiles, (list, tuple))
    values = [percentiles] if single else list(percentiles)
    axes = _axes(axis, tensor.ndim)
    kept = [d for d in range(tensor.ndim) if d not in axes]
    flat = tensor.permute(*kept, *axes).reshape(*[tensor.shape[d] for d in kept], -1)
    ordered = torch.sort(flat, dim=-1).values
    indices = torch.tensor([percentile_index(p, flat.shape[-1]) for p in values], device=tensor.device)
    picked = ordered.index_select(-1, indices).movedim(-1, 0)  # (len(values), *kept)
    if keepdims:
        picked = picked.reshape(len(values), *[1 if d in axes else tensor.shape[d] for d in range(tensor.ndim)])
    return picked[0] if single else picked


def check_nan(val: torch.Tensor) -> bool:
    """The torch case of `fe.backend.check_nan`."""
    if not (val.is_floating_point() or val.is_complex()):
        return False
    return bool(torch.isnan(val).any())
