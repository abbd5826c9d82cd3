"""Mixed precision: `torch.autocast` (float16 on CUDA, bfloat16 on the CPU) and CUDA loss scaling (`GradScaler`).

A model built with `mixed_precision=True` runs its ops under autocast; on CUDA each of its optimizers carries a
`GradScaler` as `optimizer.scaler` (None elsewhere), which the update kernel uses to scale the loss and to step, and
whose state is saved with the optimizer's.
"""
from __future__ import annotations

import contextlib
from typing import ContextManager, Optional

import torch

__all__ = ["autocast_dtype", "autocast_context", "make_grad_scaler", "grad_scaler_of"]


def autocast_dtype(device: torch.device) -> torch.dtype:
    """The low-precision type autocast uses on `device`: float16 on CUDA, bfloat16 elsewhere."""
    return torch.float16 if device.type == "cuda" else torch.bfloat16


def autocast_context(device: torch.device, enabled: bool) -> ContextManager[None]:
    """An autocast context for `device` when `enabled`, else a no-op context.

    Example:
        >>> with autocast_context(torch.device("cpu"), True):
        ...     (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
        torch.bfloat16
    """
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=autocast_dtype(device))


def make_grad_scaler(device: torch.device, mixed_precision: bool,
                     sharded: bool = False) -> Optional["torch.amp.GradScaler"]:
    """A loss scaler for float16 training on CUDA; None on the CPU (bfloat16 needs no scaling) or in full precision.

    A sharded model's scaler is FSDP's `ShardedGradScaler`: each process holds different gradient slices, so an
    inf/NaN found in one process's slices must skip the step (and lower the scale) on every process; a plain
    `GradScaler` decides per process, the processes' scales drift apart, and the averaged gradients mix scales.
    """
    if mixed_precision and device.type == "cuda":
        if sharded:
            from torch.distributed.fsdp.sharded_grad_scaler import \
                ShardedGradScaler  # pylint: disable=import-outside-toplevel
            return ShardedGradScaler(device="cuda")
        scaler_class = getattr(torch.amp, "GradScaler", None)
        if scaler_class is None:  # torch < 2.3
            return torch.cuda.amp.GradScaler()
        return scaler_class(device="cuda")
    return None


def grad_scaler_of(optimizer: Optional[torch.optim.Optimizer]) -> Optional["torch.amp.GradScaler"]:
    """The `GradScaler` attached to `optimizer` by `build`, or None."""
    return getattr(optimizer, "scaler", None) if optimizer is not None else None
