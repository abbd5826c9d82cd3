"""torch tensors for `fe.util`: to numpy (`to_number`), to a device (`move_to_device`), out of the graph (`detach`).

Called by fe_core.util (inspection.to_number, tensors.move_tensors_to_device / detach_tensors) for torch values.
"""
from __future__ import annotations

from typing import Union

import numpy as np
import torch

__all__ = ["to_number", "move_to_device", "detach"]

_NUMPY_LACKS = (torch.bfloat16,)


def to_number(data: torch.Tensor) -> np.ndarray:
    """A torch tensor's values as a numpy array (detached, on the CPU; bfloat16 becomes float32)."""
    data = data.detach()
    if data.dtype in _NUMPY_LACKS:
        data = data.float()
    return data.cpu().numpy()


def move_to_device(data: torch.Tensor, device: Union[str, torch.device]) -> torch.Tensor:
    """`data` on `device` (the same tensor when it is already there)."""
    return data.to(device)


def detach(data: torch.Tensor) -> torch.Tensor:
    """`data` detached from the autograd graph."""
    return data.detach()
