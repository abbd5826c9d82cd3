"""Torch kernels of fe-core's MixUpBatch and CutMixBatch, drawing from torch's global generator of the data's device
(seeded by `enable_deterministic`, saved in checkpoints)."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

import torch

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _beta(op: Any, device: torch.device) -> torch.distributions.Beta:
    cached = op.__dict__.get("_fe_torch_beta")
    if cached is None or cached[0] != device:
        concentration = torch.tensor(op.alpha, dtype=torch.float32, device=device)
        cached = (device, torch.distributions.Beta(concentration, concentration, validate_args=False))
        op.__dict__["_fe_torch_beta"] = cached
    return cached[1]


def _float_labels(labels: Tensor, images: Tensor) -> Tensor:
    dtype = images.dtype if images.is_floating_point() else torch.float32
    return labels if labels.dtype == dtype else labels.to(dtype)


def mixup_batch_kernel(op: Any, data: Sequence[Tensor], state: Dict[str, Any]) -> List[Tensor]:
    """lam * x + (1 - lam) * x rolled by one sample, for the images and the labels (one `lerp` each)."""
    images, labels = data
    labels = _float_labels(labels, images)
    beta = _beta(op, images.device)
    if op.shared_beta:
        lam_images = lam_labels = beta.sample()
    else:
        lam = beta.sample((images.shape[0], ))
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
    lam = _beta(op, device).sample()
    center = torch.rand(2, device=device)
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
