"""Torch kernels of fe-core's DiceLoss, FocalLoss, Hinge, L2Regularizaton and SuperLoss (computed in float32)."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Union

import torch
import torch.nn.functional as F

__all__ = ["KERNELS", "lambertw"]

Tensor = torch.Tensor
EPSILON = 1e-7


def _per_sample_mean(loss: Tensor) -> Tensor:
    return loss.reshape(loss.shape[0], -1).mean(dim=1) if loss.ndim > 1 else loss


def _output(op: Any, loss: Tensor) -> Union[Tensor, List[Tensor]]:
    return [loss] if op.out_list else loss


def dice_loss_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """1 - dice per sample (and channel, axis 1), averaged as the op says."""
    pred, true = data
    pred = pred.float()
    true = true.to(pred.dtype).reshape(pred.shape)
    axes = tuple(range(2, pred.ndim))
    intersection = (pred * true).sum(dim=axes) if axes else pred * true
    if op.soft_dice:
        area = (true * true).sum(dim=axes) + (pred * pred).sum(dim=axes) if axes else true * true + pred * pred
    else:
        area = true.sum(dim=axes) + pred.sum(dim=axes) if axes else true + pred
    dice = 2.0 * intersection / (area + op.epsilon)  # (batch, channels)
    weights = op.weight_list(dice.shape[1])
    if weights is not None:
        dice = dice * torch.tensor(weights, dtype=dice.dtype, device=dice.device)
    if op.channel_average:
        dice = dice.mean(dim=1)
    loss = 1.0 - dice
    return _output(op, loss.mean(dim=0) if op.average_loss else loss)


def focal_loss_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """Sigmoid focal loss with the op's normalization and reductions."""
    pred, true = data
    pred = pred.float()
    true = true.to(pred.dtype).reshape(pred.shape)
    if op.from_logits:
        probability = torch.sigmoid(pred)
        cross_entropy = F.binary_cross_entropy_with_logits(pred, true, reduction="none")
    else:
        probability = pred
        clamped = pred.clamp(EPSILON, 1.0 - EPSILON)
        cross_entropy = -(true * torch.log(clamped) + (1.0 - true) * torch.log(1.0 - clamped))
    loss = cross_entropy
    if op.gamma:
        p_t = probability * true + (1.0 - probability) * (1.0 - true)
        loss = loss * (1.0 - p_t)**op.gamma
    if op.alpha is not None and op.alpha >= 0:
        loss = loss * (op.alpha * true + (1.0 - op.alpha) * (1.0 - true))
    if op.normalize and loss.ndim > 1:
        positives = true.reshape(true.shape[0], -1).sum(dim=1).clamp(min=1.0)
        loss = loss / positives.reshape((-1, ) + (1, ) * (loss.ndim - 1))
    if loss.ndim > 1 and op.shape_reduction != "none":
        flat = loss.reshape(loss.shape[0], -1)
        loss = flat.sum(dim=1) if op.shape_reduction == "sum" else flat.mean(dim=1)
    if op.sample_reduction == "mean":
        loss = loss.mean(dim=0)
    elif op.sample_reduction == "sum":
        loss = loss.sum(dim=0)
    return _output(op, loss)


def hinge_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """mean(max(0, 1 - y_true * y_pred)) per sample, then over the batch if `average_loss`."""
    pred, true = data
    pred = pred.float()
    loss = _per_sample_mean(torch.clamp(1.0 - true.to(pred.dtype).reshape(pred.shape) * pred, min=0.0))
    return _output(op, loss.mean() if op.average_loss else loss)


def l2_regularization_kernel(op: Any, data: Tensor, state: Dict[str, Any]) -> Tensor:
    """loss + beta * sum(w**2) / 2 over the model's trainable parameters."""
    penalty = sum(parameter.float().pow(2).sum() for parameter in op.model.parameters() if parameter.requires_grad)
    return data + op.beta * 0.5 * penalty


def lambertw(tensor: Tensor, iterations: int = 6) -> Tensor:
    """The principal branch W0 of the Lambert W function (for inputs >= -1/e), by Halley's method in float64."""
    x = tensor.double()
    near_branch = torch.sqrt(torch.clamp(2.0 * (math.e * x + 1.0), min=0.0))
    guess = torch.where(x < -0.25, -1.0 + near_branch - near_branch**2 / 3.0 + 11.0 / 72.0 * near_branch**3,
                        torch.log1p(torch.clamp(x, min=-0.25)))
    w = guess
    for _ in range(iterations):
        exp_w = torch.exp(w)
        f = w * exp_w - x
        w_plus_one = torch.where((w + 1.0).abs() < 1e-12, torch.full_like(w, 1e-12), w + 1.0)
        w = w - f / (exp_w * w_plus_one - (w + 2.0) * f / (2.0 * w_plus_one))
    return w.to(tensor.dtype)


def _super_loss_states(op: Any) -> Dict[str, list]:
    return op.fe_backend_state.setdefault("modes", {})


def super_loss_init_kernel(op: Any, device: Any, state: Dict[str, Any]) -> None:
    """Per mode [initialized, tau tensor] (tau on the device), restoring any state loaded before the build."""
    states = _super_loss_states(op)
    pending = op.fe_backend_state.pop("pending", {})
    for mode in ("train", "eval", "test", "infer"):
        initial = 0.0 if op.tau_method == "exp" else float(op.tau_method)
        init, tau = pending.get(mode, (0.0, initial))
        states[mode] = [bool(init), torch.tensor(float(tau), dtype=torch.float32, device=device)]


def super_loss_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """The super loss of the wrapped loss's per-sample values (and the confidences, if asked)."""
    base = op.loss.forward(data, state)
    if isinstance(base, (list, tuple)):
        base = base[0]
    base = base.float()
    entry = _super_loss_states(op).setdefault(state.get("mode", "train"), [False, torch.zeros((), device=base.device)])
    tau = entry[1]
    if tau.device != base.device:
        tau = entry[1] = tau.to(base.device)
    if op.tau_method == "exp":
        mean = base.detach().mean()
        tau = tau - 0.1 * (tau - mean) if entry[0] else mean
        entry[1] = tau
        if not state.get("warmup", False):
            entry[0] = True
    shifted = base - tau
    ln_sigma = -lambertw(0.5 * torch.clamp(shifted.detach() / op.lam, min=op.CAP))
    loss = shifted * torch.exp(ln_sigma) + op.lam * ln_sigma**2
    if op.average_loss:
        loss = loss.mean()
    return [loss, torch.exp(ln_sigma)] if len(op.outputs) == 2 else _output(op, loss)


def super_loss_read_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Dict[str, List[float]]:
    """{mode: [initialized, tau]} as floats."""
    return {mode: [float(init), float(tau.detach().cpu())] for mode, (init, tau) in _super_loss_states(op).items()}


def super_loss_write_kernel(op: Any, data: Dict[str, List[float]], state: Dict[str, Any]) -> None:
    """Restore what `super_loss_read_kernel` returned."""
    states = _super_loss_states(op)
    for mode, (init, tau) in data.items():
        device = states[mode][1].device if mode in states else None
        states[mode] = [bool(init), torch.tensor(float(tau), dtype=torch.float32, device=device)]


KERNELS = {
    "dice_loss": dice_loss_kernel,
    "focal_loss": focal_loss_kernel,
    "hinge": hinge_kernel,
    "l2_regularization": l2_regularization_kernel,
    "super_loss": super_loss_kernel,
    "super_loss_init": super_loss_init_kernel,
    "super_loss_read": super_loss_read_kernel,
    "super_loss_write": super_loss_write_kernel,
}
