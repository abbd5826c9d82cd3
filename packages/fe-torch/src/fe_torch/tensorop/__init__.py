"""Torch kernels of fe-core's TensorOps beyond the core ones (`fe_torch.kernels`).

`register_kernels(TorchBackend)` (called once by `fe_torch.framework`) makes each `KERNELS[name]` the backend's
`kernel_<name>`, which `TensorOp.build` looks up.
"""
from typing import Any, Callable, Dict

from fe_torch.tensorop import augmentation, gradient, meta, super_loss, tensor_ops

__all__ = ["KERNELS", "register_kernels"]

KERNELS: Dict[str, Callable[..., Any]] = {
    **tensor_ops.KERNELS, **super_loss.KERNELS, **gradient.KERNELS, **augmentation.KERNELS, **meta.KERNELS}


def register_kernels(backend_class: type) -> None:
    """Install every kernel of this package on `backend_class` as a `kernel_<name>` static method."""
    for name, function in KERNELS.items():
        setattr(backend_class, f"kernel_{name}", staticmethod(function))
