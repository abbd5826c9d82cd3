"""Torch cross entropies behind `fe_core.backend.crossentropy` (class axis 1, computed in float32 under AMP).

The fused losses of `torch.nn.functional` do the work where they compute the same values (logits, sparse labels), so
a loss costs one or two kernel launches. Class-weight tables are cached per (weights, size, device).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import torch
import torch.nn.functional as F

from fe_core.backend.crossentropy import EPSILON, weight_table

__all__ = ["binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "class_weight_tensor",
           "NO_IGNORED_LABEL"]

# torch's fused losses skip labels equal to ignore_index (-100 by default); fe ignores no label, so a bad label still
# raises instead of silently vanishing from the loss.
NO_IGNORED_LABEL = torch.iinfo(torch.int64).min

_TABLES: Dict[Tuple[Any, ...], torch.Tensor] = {}


def class_weight_tensor(class_weights: Dict[int, float], num_classes: int, device: torch.device) -> torch.Tensor:
    """The class-weight lookup table on `device` (built once per distinct weights, size and device)."""
    key = (tuple(sorted((int(k), float(v)) for k, v in class_weights.items())), int(num_classes), str(device))
    table = _TABLES.get(key)
    if table is None:
        if len(_TABLES) > 64:
            _TABLES.clear()
        table = _TABLES[key] = torch.from_numpy(weight_table(class_weights, num_classes)).to(device)
    return table


def _float(y_pred: torch.Tensor) -> torch.Tensor:
    return y_pred if y_pred.dtype in (torch.float32, torch.float64) else y_pred.float()


def _finish(loss: torch.Tensor, average_loss: bool) -> torch.Tensor:
    return loss.mean() if average_loss else loss


def binary_crossentropy(y_pred: torch.Tensor, y_true: torch.Tensor, from_logits: bool, average_loss: bool,
                        class_weights: Optional[Dict[int, float]]) -> torch.Tensor:
    """The torch case of `fe.backend.binary_crossentropy`."""
    pred = _float(y_pred)
    target = y_true.to(pred.dtype)
    if target.shape != pred.shape:
        target = target.reshape(pred.shape)
    if from_logits:
        loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none")
    else:
        probability = pred.clamp(EPSILON, 1.0 - EPSILON)
        loss = -(target * torch.log(probability) + (1.0 - target) * torch.log1p(-probability))
    if class_weights:
        loss = loss * class_weight_tensor(class_weights, 2, loss.device)[target.round().long()]
    if loss.ndim > 1:
        loss = loss.reshape(loss.shape[0], -1).mean(dim=1)
    return _finish(loss, average_loss)


def _log_probabilities(pred: torch.Tensor, from_logits: bool) -> torch.Tensor:
    if from_logits:
        return torch.log_softmax(pred, dim=1)
    return torch.log(pred.clamp(EPSILON, 1.0 - EPSILON))


def categorical_crossentropy(y_pred: torch.Tensor, y_true: torch.Tensor, from_logits: bool, average_loss: bool,
                             class_weights: Optional[Dict[int, float]]) -> torch.Tensor:
    """The torch case of `fe.backend.categorical_crossentropy`."""
    pred = _float(y_pred)
    target = y_true.to(pred.dtype)
    if from_logits and not class_weights:
        return F.cross_entropy(pred, target, reduction="mean" if average_loss else "none")
    loss = -(target * _log_probabilities(pred, from_logits)).sum(dim=1)
    if class_weights:
        loss = loss * class_weight_tensor(class_weights, pred.shape[1], loss.device)[target.argmax(dim=1)]
    return _finish(loss, average_loss)


def sparse_labels(y_true: torch.Tensor, pred_ndim: int) -> torch.Tensor:
    """int64 labels without the class axis (a label tensor with as many axes as the prediction loses axis 1)."""
    labels = y_true.squeeze(1) if y_true.ndim == pred_ndim else y_true
    return labels if labels.dtype is torch.int64 else labels.long()


def sparse_categorical_crossentropy(y_pred: torch.Tensor, y_true: torch.Tensor, from_logits: bool,
                                    average_loss: bool, class_weights: Optional[Dict[int, float]]) -> torch.Tensor:
    """The torch case of `fe.backend.sparse_categorical_crossentropy`."""
    pred = _float(y_pred)
    labels = sparse_labels(y_true, pred.ndim)
    weight = class_weight_tensor(class_weights, pred.shape[1], pred.device) if class_weights else None
    reduction = "none" if weight is not None or not average_loss else "mean"
    if from_logits:
        loss = F.cross_entropy(pred, labels, weight=weight, reduction=reduction, ignore_index=NO_IGNORED_LABEL)
    else:
        loss = F.nll_loss(_log_probabilities(pred, False), labels, weight=weight, reduction=reduction,
                          ignore_index=NO_IGNORED_LABEL)
    return _finish(loss, average_loss) if reduction == "none" else loss
