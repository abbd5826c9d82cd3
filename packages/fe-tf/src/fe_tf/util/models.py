"""TensorFlow models for `fe.util`: the optimizer's name and the trainable / frozen weights."""
from __future__ import annotations

from typing import Any, List, Tuple

__all__ = ["get_optimizer_name", "trainable_and_frozen_weights"]


def get_optimizer_name(model: Any) -> str:
    """The class name of the model's current optimizer (set by `fe.build`), or 'None'."""
    optimizer = getattr(model, "current_optimizer", None)
    return type(optimizer).__name__ if optimizer is not None else "None"


def trainable_and_frozen_weights(model: Any) -> Tuple[List[Any], List[Any]]:
    """The model's trainable and non-trainable weights (BatchNorm statistics are non-trainable)."""
    return list(model.trainable_weights), list(model.non_trainable_weights)
