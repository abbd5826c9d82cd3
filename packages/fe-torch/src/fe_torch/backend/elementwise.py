"""Torch element-wise math behind `fe_core.backend.elementwise`."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch

from fe_core.backend.elementwise import lambertw_halley

__all__ = ["abs", "exp", "sign", "power", "tensor_sqrt", "tensor_round", "clip_by_value", "maximum", "where", "matmul",
           "lambertw"]

_MATH = SimpleNamespace(exp=torch.exp, log1p=torch.log1p, log=torch.log, sqrt=torch.sqrt, where=torch.where,
                        maximum=torch.maximum)


def _floating(tensor: torch.Tensor) -> torch.Tensor:
    return tensor if tensor.is_floating_point() else tensor.float()


def abs(tensor: torch.Tensor) -> torch.Tensor:  # pylint: disable=redefined-builtin
    """The torch case of `fe.backend.abs`."""
    return torch.abs(tensor)


def exp(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.exp`."""
    return torch.exp(tensor)


def sign(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.sign`."""
    return torch.sign(tensor)


def power(tensor: torch.Tensor, power_: Any) -> torch.Tensor:
    """The torch case of `fe.backend.pow` and `fe.backend.tensor_pow`."""
    return torch.pow(tensor, power_)


def tensor_sqrt(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.tensor_sqrt`."""
    return torch.sqrt(tensor)


def tensor_round(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.tensor_round`."""
    return torch.round(tensor)


def clip_by_value(tensor: torch.Tensor, min_value: Any, max_value: Any) -> torch.Tensor:
    """The torch case of `fe.backend.clip_by_value`."""
    if min_value is None and max_value is None:
        return tensor
    if isinstance(min_value, torch.Tensor) or isinstance(max_value, torch.Tensor):
        # torch.clamp takes two numbers or two tensors: a number beside a tensor bound becomes a tensor
        min_value, max_value = (value if value is None or isinstance(value, torch.Tensor) else
                                torch.as_tensor(value, dtype=tensor.dtype, device=tensor.device)
                                for value in (min_value, max_value))
    return torch.clamp(tensor, min=min_value, max=max_value)


def maximum(tensor1: torch.Tensor, tensor2: Any) -> torch.Tensor:
    """The torch case of `fe.backend.maximum`."""
    if not isinstance(tensor2, torch.Tensor):
        tensor2 = torch.as_tensor(tensor2, dtype=tensor1.dtype, device=tensor1.device)
    return torch.maximum(tensor1, tensor2)


def where(condition: torch.Tensor, yes: Any, no: Any) -> torch.Tensor:
    """The torch case of `fe.backend.where`."""
    return torch.where(condition, yes, no)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.matmul`."""
    return torch.matmul(a, b)


def lambertw(tensor: torch.Tensor) -> torch.Tensor:
    """The torch case of `fe.backend.lambertw`."""
    return lambertw_halley(_floating(tensor), _MATH)
