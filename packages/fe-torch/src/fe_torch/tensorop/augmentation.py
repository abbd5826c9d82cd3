"""Torch kernels of fe-core's MixUpBatch and CutMixBatch, drawing from torch's global generator of the data's device
(seeded by `enable_deterministic`, saved in checkpoints)."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

import torch

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _distribution(op: Any, name: str, device: torch.device, make: Any) -> Any:
    """The op's `beta` / `uniform` distribution (FastEstimator's attributes): one the user put there (a stand-in with
    `sample()`), else torch's, made for `device` (drawing from its seeded global generator) and stored there."""
    cached = op.__dict__.get(f"_fe_torch_{name}")
    current = op.__dict__.get(name)
    if current is not None and (cached is None or current is not cached[1]):
        return current
    if cached is None or cached[0] != device:
        cached = (device, make(device))
        op.__dict__[f"_fe_torch_{name}"] = cached
        op.__dict__[name] = cached[1]
    return cached[1]


def _beta(op: Any, device: torch.device) -> Any:
    def make(where: torch.device) -> torch.distributions.Beta:
        concentration = torch.tensor(op.alpha, dtype=torch.float32, device=where)
        return torch.distributions.Beta(concentration, concentration, validate_args=False)
    return _distribution(op, "beta", device, make)


def _uniform(op: Any, device: torch.device) -> Any:
    def make(where: torch.device) -> torch.distributions.Uniform:
        return torch.distributions.Uniform(torch.tensor(0.0, device=where), torch.tensor(1.0, device=where),
                                           validate_args=False)
    return _distribution(op, "uniform", device, make)


def _draw(distribution: Any, device: torch.device, shape: tuple = ()) -> Tensor:
    """`distribution.sample(shape)` as a float32 tensor on `device` (a stand-in whose `sample()` takes no shape, or
    gives one value, is broadcast)."""
    try:
        value = distribution.sample(shape) if shape else distribution.sample()
    except TypeError:
        value = distribution.sample()
    value = torch.as_tensor(value, dtype=torch.float32, device=device)
    if value.numel() == 1:
        value = value.reshape(())
    return value.expand(shape) if shape and value.ndim == 0 else value


def _float_labels(labels: Tensor, images: Tensor) -> Tensor:
    dtype = images.dtype if images.is_floating_point() else torch.float32
    return labels if labels.dtype == dtype else labels.to(dtype)


def mixup_batch_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """lam * x + (1 - lam) * x rolled by one sample, for the images and the labels (one `lerp` each)."""
    images, labels = data
    labels = _float_labels(labels, images)
    beta = _beta(op, images.device)
    if op.shared_beta:
        lam_images = lam_labels = _draw(beta, images.device)
    else:
        lam = _draw(beta, images.device, (images.shape[0], ))
        lam_images = lam.view((-1, ) + (1, ) * (images.ndim - 1))
        lam_labels = lam_images if labels.ndim == images.ndim else lam.view((-1, ) + (1, ) * (labels.ndim - 1))
    if images.is_floating_point():
        if lam_images.dtype != images.dtype:
            lam_images = lam_images.to(images.dtype)
        mixed_images = torch.lerp(images.roll(1, 0), images, lam_images)
    else:
        mixed_images = lam_images * images + (1.0 - lam_images) * images.roll(1, 0)
    if lam_labels.dtype != labels.dtype:
        lam_labels = lam_labels.to(labels.dtype)
    return [mixed_images, torch.lerp(labels.roll(1, 0), labels, lam_labels)]


def cutmix_batch_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """Paste a box of the rolled batch into (batch, channels, H, W) images; mix labels by the box area."""
    images, labels = data
    labels = _float_labels(labels, images)
    device = images.device
    height, width = images.shape[-2], images.shape[-1]
    lam = _draw(_beta(op, device), device)
    uniform = _uniform(op, device)
    center = torch.stack([_draw(uniform, device), _draw(uniform, device)])  # (y, x) of the box centre
    cut = torch.sqrt(1.0 - lam)
    cut_h, cut_w = height * cut, width * cut
    y1 = torch.round(torch.clamp(center[0] * height - cut_h / 2, min=0.0))
    y2 = torch.round(torch.clamp(center[0] * height + cut_h / 2, max=float(height)))
    x1 = torch.round(torch.clamp(center[1] * width - cut_w / 2, min=0.0))
    x2 = torch.round(torch.clamp(center[1] * width + cut_w / 2, max=float(width)))
    rows = torch.arange(height, device=device, dtype=torch.float32)
    cols = torch.arange(width, device=device, dtype=torch.float32)
    mask = ((rows >= y1) & (rows < y2))[:, None] & ((cols >= x1) & (cols < x2))[None, :]
    mixed_images = torch.where(mask, images.roll(1, 0), images)
    kept = 1.0 - (x2 - x1) * (y2 - y1) / float(height * width)
    kept = kept.to(labels.dtype)
    mixed_labels = kept * labels + (1.0 - kept) * labels.roll(1, 0)
    return [mixed_images, mixed_labels]


KERNELS = {"mixup_batch": mixup_batch_kernel, "cutmix_batch": cutmix_batch_kernel}
