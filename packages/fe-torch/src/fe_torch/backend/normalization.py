"""Torch helpers of `fe_core.backend.normalization` (the functions themselves are written once in fe_core)."""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["is_floating", "constant_like"]


def is_floating(tensor: torch.Tensor) -> bool:
    """Whether `tensor` has a floating dtype."""
    return tensor.is_floating_point()


def constant_like(values: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """Per-channel values shaped to broadcast over the channel axis of (..., C, H, W) images."""
    constant = torch.as_tensor(values, dtype=like.dtype, device=like.device)
    if constant.ndim == 1 and constant.numel() > 1 and like.ndim >= 3:
        constant = constant.reshape(-1, 1, 1)
    return constant
