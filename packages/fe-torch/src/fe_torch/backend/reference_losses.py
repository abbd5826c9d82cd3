"""FastEstimator's torch-only helpers of `fe.backend`: `pytorch_focal_loss` and `preprocess_torch_weights`.

`fe.backend.focal_loss` is the framework-neutral loss; these keep scripts that call the torch helpers directly
working.
"""
from __future__ import annotations

from collections import OrderedDict

import torch
import torch.nn.functional as F

from fe_core.export import fe_export

__all__ = ["pytorch_focal_loss", "preprocess_torch_weights"]


@fe_export("fe.backend.pytorch_focal_loss", "fe.backend._focal_loss.pytorch_focal_loss")
def pytorch_focal_loss(y_pred: torch.Tensor, y_true: torch.Tensor, alpha: float = 0.25, gamma: float = 2,
                       from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary focal loss (Lin et al., 2018) between predictions and 0/1 targets of the same shape.

    Args:
        y_pred: Scores (probabilities, or logits with `from_logits`).
        y_true: 0/1 targets shaped like `y_pred`.
        alpha: Weight of the positive class in (0, 1); a negative value disables the weighting.
        gamma: Focusing exponent (0 gives plain binary cross entropy).
        from_logits: Whether `y_pred` holds logits.

    Returns:
        The loss of every element, shaped like `y_pred`.
    """
    y_true = y_true.to(y_pred.dtype)
    if from_logits:
        probability = torch.sigmoid(y_pred)
        cross_entropy = F.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    else:
        probability = y_pred
        cross_entropy = F.binary_cross_entropy(y_pred, y_true, reduction="none")
    p_t = probability * y_true + (1 - probability) * (1 - y_true)
    loss = cross_entropy * (1 - p_t) ** gamma
    if alpha >= 0:
        loss = (alpha * y_true + (1 - alpha) * (1 - y_true)) * loss
    return loss


@fe_export("fe.backend.preprocess_torch_weights", "fe.backend._load_model.preprocess_torch_weights")
def preprocess_torch_weights(weights_path: str) -> "OrderedDict[str, torch.Tensor]":
    """Read a torch state dict (weights only: no code from the file runs) and drop DataParallel's `module.` prefixes.

    Args:
        weights_path: The `.pt`/`.pth` file.

    Returns:
        The state dict with keys as a plain model expects them.
    """
    state = torch.load(weights_path, map_location="cpu", weights_only=True)
    return OrderedDict((key[len("module."):] if key.startswith("module.") else key, value)
                       for key, value in state.items())
