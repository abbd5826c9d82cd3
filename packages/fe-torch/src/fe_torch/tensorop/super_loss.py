"""Torch kernels of fe-core's SuperLoss: the per-mode moving-average threshold (tensors on the device) and the
super loss itself (Lambert W from fe.backend)."""
from __future__ import annotations

from typing import Any, Dict, List, Union

import torch

from fe_core.backend.elementwise import lambertw

__all__ = ["KERNELS"]

Tensor = torch.Tensor


def _output(op: Any, loss: Tensor) -> Union[Tensor, List[Tensor]]:
    return [loss] if op.out_list else loss


def _super_loss_states(op: Any) -> Dict[str, list]:
    return op.fe_backend_state.setdefault("modes", {})


def super_loss_init_kernel(op: Any, device: Any, state: Dict[str, Any]) -> None:
    """Per mode [initialized, tau tensor] (tau on the device), restoring any state loaded before the build."""
    states = _super_loss_states(op)
    pending = op.fe_backend_state.pop("pending", {})
    for mode in ("train", "eval", "test", "infer"):
        initial = 0.0 if op.tau_method == "exp" else float(op.tau_method)
        init, tau = pending.get(mode, (0.0, initial))
        states[mode] = [_flag(init), torch.tensor(float(tau), dtype=torch.float32, device=device)]


def _flag(value: Any) -> Tensor:
    """FastEstimator's `initialized` flag: a bool tensor (on the CPU, so testing it never waits for a GPU)."""
    return torch.tensor(bool(value))


def super_loss_kernel(op: Any, data: Any, state: Dict[str, Any]) -> Union[Tensor, List[Tensor]]:
    """The super loss of the wrapped loss's per-sample values (and the confidences, if asked)."""
    base = op.loss.forward(data, state)
    if isinstance(base, (list, tuple)):
        base = base[0]
    base = base.float()
    entry = _super_loss_states(op).setdefault(state.get("mode", "train"),
                                              [_flag(False), torch.zeros((), device=base.device)])
    tau = entry[1]
    if tau.device != base.device:
        tau = entry[1] = tau.to(base.device)
    if op.tau_method == "exp":
        mean = base.detach().mean()
        tau = tau - 0.1 * (tau - mean) if entry[0] else mean
        entry[1] = tau
        if not state.get("warmup", False) and not entry[0]:
            entry[0] = _flag(True)
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
        states[mode] = [_flag(init), torch.tensor(float(tau), dtype=torch.float32, device=device)]


KERNELS = {
    "super_loss": super_loss_kernel,
    "super_loss_init": super_loss_init_kernel,
    "super_loss_read": super_loss_read_kernel,
    "super_loss_write": super_loss_write_kernel,
}
