"""Torch conversions behind `fe_core.backend.conversion`."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
import torch

from fe_torch.devices import standard_layout

__all__ = ["to_tensor", "to_numpy", "cast", "convert_tensor_precision"]


def to_tensor(value: Any, shared_memory: bool) -> Any:
    """`value` as a CPU torch tensor (tensors of other frameworks via numpy; None and strings unchanged)."""
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "OUSV":  # strings and objects have no torch form
            return value
        tensor = torch.from_numpy(standard_layout(value if value.flags.writeable else value.copy()))
    elif isinstance(value, (bool, int, float, complex, np.generic)):
        tensor = torch.tensor(value)
    elif _is_tf(value):
        tensor = torch.from_numpy(np.array(value.numpy()))
    else:
        return value
    return tensor.share_memory_() if shared_memory else tensor


def _is_tf(value: Any) -> bool:
    module = type(value).__module__.partition(".")[0]
    return module in ("tensorflow", "keras") and hasattr(value, "numpy") and "tensorflow" in sys.modules


def to_numpy(value: torch.Tensor) -> np.ndarray:
    """`value` as a numpy array (detached, on the host)."""
    value = value.detach()
    if value.dtype is torch.bfloat16:
        value = value.float()
    return value.cpu().numpy()


def cast(value: torch.Tensor, name: str) -> torch.Tensor:
    """The torch case of `fe.backend.cast`."""
    return value.to(getattr(torch, name))


def convert_tensor_precision(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.convert_tensor_precision`."""
    return tensor.to(torch.float32)
