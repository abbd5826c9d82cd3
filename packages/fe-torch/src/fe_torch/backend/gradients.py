"""Torch gradients behind `fe_core.backend.gradients` (`torch.autograd.grad`, never touching `.grad`)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import torch

__all__ = ["watch", "get_gradient"]


def watch(tensor: torch.Tensor, tape: Any = None) -> torch.Tensor:
    """The torch case of `fe.backend.watch`."""
    if not tensor.requires_grad:
        tensor.requires_grad_(True)
    return tensor


def get_gradient(target: torch.Tensor, sources: Union[torch.Tensor, Sequence[torch.Tensor]], higher_order: bool,
                 tape: Any, retain_graph: bool) -> Union[Optional[torch.Tensor], List[Optional[torch.Tensor]]]:
    """The torch case of `fe.backend.get_gradient`."""
    single = isinstance(sources, torch.Tensor)
    inputs = [sources] if single else list(sources)
    grad_outputs = None if target.ndim == 0 else torch.ones_like(target)
    gradients = torch.autograd.grad(target, inputs, grad_outputs=grad_outputs, retain_graph=retain_graph or None,
                                    create_graph=higher_order, allow_unused=True)
    return gradients[0] if single else list(gradients)
