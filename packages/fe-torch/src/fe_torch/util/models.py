"""torch models for `fe.util`: the optimizer's name and the trainable / frozen parameters."""
from __future__ import annotations

from typing import List, Tuple

import torch

__all__ = ["get_optimizer_name", "trainable_and_frozen_weights"]


def get_optimizer_name(model: torch.nn.Module) -> str:
    """The class name of the model's current optimizer (set by `fe.build`), or 'None'."""
    optimizer = getattr(model, "current_optimizer", None)
    return type(optimizer).__name__ if optimizer is not None else "None"


def trainable_and_frozen_weights(model: torch.nn.Module) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """The model's parameters, split into those that require gradients and those that do not."""
    parameters = list(model.parameters())
    return ([p for p in parameters if p.requires_grad], [p for p in parameters if not p.requires_grad])
