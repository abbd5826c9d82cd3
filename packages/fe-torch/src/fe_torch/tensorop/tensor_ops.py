"""Torch kernels of fe-core's tensor-shaping and value TensorOps: Gather, Normalize, UnHadamard, Permute, Reshape,
Resize3D."""
from __future__ import annotations

from typing import Any, Dict, List

import torch
import torch.nn.functional as F

from fe_core.op.tensorop.hadamard import hadamard_matrix

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _cached(op: Any, name: str, reference: Tensor, make: Any) -> Tensor:
    """A constant tensor kept on the op, remade only when the reference's device or dtype changes."""
    cached = op.__dict__.get(name)
    if cached is None or cached.device != reference.device or cached.dtype != reference.dtype:
        cached = make().to(device=reference.device, dtype=reference.dtype)
        op.__dict__[name] = cached
    return cached


def gather_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Each sample's entry at its index (or its maximum over axis 1 without indices)."""
    indices, values = data[:op.num_indices], data[op.num_indices:]
    results = []
    for position, tensor in enumerate(values):
        if not indices:
            results.append(tensor.max(dim=1).values)
            continue
        index = indices[position if len(indices) > 1 else 0].reshape(-1).to(device=tensor.device, dtype=torch.long)
        results.append(tensor[torch.arange(tensor.shape[0], device=tensor.device), index])
    return results


def normalize_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """(x - mean) / std per channel of the last axis (integers become float32)."""
    results = []
    for tensor in data:
        if not tensor.is_floating_point():
            tensor = tensor.float()
        mean = _cached(op, "_fe_torch_mean", tensor, lambda: torch.tensor(op.scaled()[0]))
        std = _cached(op, "_fe_torch_std", tensor, lambda: torch.tensor(op.scaled()[1]))
        results.append((tensor - mean) / std)
    return results


def un_hadamard_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Class probabilities from the L1 distances to the code words (inverse distance weighting)."""
    results = []
    for tensor in data:
        tensor = tensor.float() if not tensor.is_floating_point() else tensor
        codes = _cached(op, "_fe_torch_codes", tensor,
                        lambda: torch.from_numpy(hadamard_matrix(op.code_length)[:op.n_classes].copy()))
        distance = (tensor.unsqueeze(1) - codes).abs().sum(dim=-1) + op.offset
        weights = 1.0 / distance
        results.append(weights / weights.sum(dim=-1, keepdim=True))
    return results


def permute_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Reorder the axes."""
    return [tensor.permute(*op.permutation) for tensor in data]


def reshape_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Reshape to `op.shape`."""
    return [tensor.reshape(op.shape) for tensor in data]


def resize3d_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Resize (batch, channels, H, W, D) volumes ('nearest', or 'area' = adaptive average pooling)."""
    results = []
    for tensor in data:
        dtype = tensor.dtype
        value = tensor if tensor.is_floating_point() else tensor.float()
        resized = F.interpolate(value, size=op.output_shape, mode=op.resize_mode)
        results.append(resized if resized.dtype == dtype else resized.to(dtype))
    return results


KERNELS = {
    "gather": gather_kernel,
    "normalize": normalize_kernel,
    "un_hadamard": un_hadamard_kernel,
    "permute": permute_kernel,
    "reshape": reshape_kernel,
    "resize3d": resize3d_kernel,
}
