"""Torch kernels of fe-core's UnHadamard and Resize3D."""
from __future__ import annotations

from typing import Any, Dict, List

import torch
import torch.nn.functional as F

from fe_core.op.tensorop.hadamard import code_book

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _cached(op: Any, name: str, reference: Tensor, make: Any) -> Tensor:
    """A constant tensor kept on the op, remade only when the reference's device or dtype changes."""
    cached = op.__dict__.get(name)
    if cached is None or cached.device != reference.device or cached.dtype != reference.dtype:
        cached = make().to(device=reference.device, dtype=reference.dtype)
        op.__dict__[name] = cached
    return cached


def un_hadamard_kernel(op: Any, data: List[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Class probabilities from the L1 distances to the code words (inverse distance weighting)."""
    results = []
    for tensor in data:
        tensor = tensor.float() if not tensor.is_floating_point() else tensor
        codes = _cached(op, "_fe_torch_codes", tensor,
                        lambda: torch.from_numpy(code_book(op.n_classes, op.code_length)))
        distance = (tensor.unsqueeze(1) - codes).abs().sum(dim=-1) + op.offset
        weights = 1.0 / distance
        results.append(weights / weights.sum(dim=-1, keepdim=True))
    return results


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
    "un_hadamard": un_hadamard_kernel,
    "resize3d": resize3d_kernel,
}
