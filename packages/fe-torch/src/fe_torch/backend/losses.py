"""Torch losses behind `fe_core.backend.losses` (float32 under AMP; class/channel axis 1)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import torch
import torch.nn.functional as F

__all__ = ["matched_pair", "mean_squared_error", "l1_loss", "smooth_l1_loss", "huber", "hinge", "focal_elements",
           "float_like", "at_least_one", "dice_inputs", "channel_axis", "cast_like", "nan_where"]


def matched_pair(y_true: Any, y_pred: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(labels, prediction) as float tensors of the prediction's shape (half precision promoted to float32)."""
    pred = y_pred if y_pred.dtype in (torch.float32, torch.float64) else y_pred.float()
    if isinstance(y_true, torch.Tensor):
        true = y_true if y_true.dtype is pred.dtype else y_true.to(pred.dtype)
    else:
        true = torch.as_tensor(y_true, dtype=pred.dtype, device=pred.device)
    if true.shape != pred.shape and true.numel() == pred.numel():
        true = true.reshape(pred.shape)
    return true, pred


def mean_squared_error(y_true: Any, y_pred: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.mean_squared_error`."""
    true, pred = matched_pair(y_true, y_pred)
    return torch.square(pred - true).mean(dim=-1)


def l1_loss(y_true: Any, y_pred: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.l1_loss`."""
    true, pred = matched_pair(y_true, y_pred)
    return torch.abs(pred - true).mean(dim=-1)


def smooth_l1_loss(y_true: Any, y_pred: torch.Tensor, beta: float) -> torch.Tensor:
    """The torch case of `fe.backend.smooth_l1_loss`."""
    true, pred = matched_pair(y_true, y_pred)
    return F.smooth_l1_loss(pred, true, reduction="none", beta=beta).mean(dim=-1)


def huber(y_true: Any, y_pred: torch.Tensor, beta: float) -> torch.Tensor:
    """The torch case of `fe.backend.huber`."""
    true, pred = matched_pair(y_true, y_pred)
    return F.huber_loss(pred, true, reduction="none", delta=beta).mean(dim=-1)


def hinge(y_true: Any, y_pred: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.hinge`."""
    true, pred = matched_pair(y_true, y_pred)
    return torch.clamp(1.0 - true * pred, min=0.0).mean(dim=-1)


def focal_elements(y_true: Any, y_pred: torch.Tensor, gamma: float, alpha: Optional[float], from_logits: bool,
                   label_smoothing: float) -> torch.Tensor:
    """The element-wise focal loss (same shape as `y_pred`)."""
    true, pred = matched_pair(y_true, y_pred)
    if label_smoothing:
        true = true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        probability = torch.sigmoid(pred)
        cross_entropy = F.binary_cross_entropy_with_logits(pred, true, reduction="none")
    else:
        probability = pred.clamp(1e-7, 1.0 - 1e-7)
        cross_entropy = -(true * torch.log(probability) + (1.0 - true) * torch.log1p(-probability))
    loss = cross_entropy
    if gamma:
        p_t = probability * true + (1.0 - probability) * (1.0 - true)
        loss = loss * (1.0 - p_t)**gamma
    if alpha is not None:
        loss = (alpha * true + (1.0 - alpha) * (1.0 - true)) * loss
    return loss


def float_like(value: Any, like: torch.Tensor) -> torch.Tensor:
    """`value` cast to `like`'s dtype and shaped like it."""
    value = torch.as_tensor(value, device=like.device).to(like.dtype)
    return value.reshape(like.shape) if value.shape != like.shape else value


def at_least_one(value: torch.Tensor) -> torch.Tensor:
    """`value` with every element below 1 raised to 1."""
    return torch.clamp(value, min=1.0)


def dice_inputs(y_pred: torch.Tensor, y_true: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    """(prediction, labels) for `dice_score`: float32 for half-precision or integer predictions."""
    pred = y_pred if y_pred.dtype in (torch.float32, torch.float64) else y_pred.float()
    return pred, torch.as_tensor(y_true, device=pred.device).to(pred.dtype)


def channel_axis(tensor: torch.Tensor) -> int:
    """The channel axis of `tensor` for `dice_score`."""
    return 1


def cast_like(value: Any, like: torch.Tensor) -> torch.Tensor:
    """`value` (a tensor or a boolean mask) cast to `like`'s dtype."""
    return torch.as_tensor(value, device=like.device).to(like.dtype)


def nan_where(condition: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """`value` with NaN where `condition` holds."""
    return torch.where(condition, torch.full_like(value, float("nan")), value)
