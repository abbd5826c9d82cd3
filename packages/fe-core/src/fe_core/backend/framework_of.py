"""`get_framework` and `get_scaled_data`: which framework a tensor belongs to, and constants made in that framework.

FastEstimator's normalization helpers use these to write one function for every tensor kind. fe's own functions
dispatch by type (`fe_core.backend.dispatch`); these two are kept for user code that calls them.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.backend.conversion import to_tensor
from fe_core.export import fe_export

__all__ = ["get_framework", "get_scaled_data"]


@fe_export("fe.backend.get_framework", "fe.backend._tensor_normalize.get_framework")
def get_framework(tensor: Any) -> Tuple[str, Optional[Any]]:
    """The framework of `tensor` ('np', 'tf' or 'torch') and, for torch, its device.

    Args:
        tensor: A numpy array, a tf tensor or a torch tensor.

    Returns:
        (framework, device): the device is the torch tensor's device, else None.

    Raises:
        ValueError: If `tensor` is none of those.

    Example:
        >>> get_framework(np.zeros(2))
        ('np', None)
    """
    if isinstance(tensor, (np.ndarray, np.generic)):
        return "np", None
    module = type(tensor).__module__.split(".")[0]
    if module == "torch":
        return "torch", tensor.device
    if module in ("tensorflow", "keras"):
        return "tf", None
    raise ValueError(f"get_framework: unrecognized data type {type(tensor).__module__}.{type(tensor).__qualname__}")


@fe_export("fe.backend.get_scaled_data", "fe.backend._tensor_normalize.get_scaled_data")
def get_scaled_data(data: Union[float, Sequence[float]] = (0.485, 0.456, 0.406),
                    scale_factor: float = 255.0,
                    framework: str = "np",
                    device: Optional[Any] = None) -> Any:
    """`data * scale_factor` as a float32 constant of `framework` (on `device` for torch).

    Args:
        data: The value(s) to scale, e.g. ImageNet's channel means.
        scale_factor: The multiplier (255 turns [0, 1] statistics into pixel units).
        framework: 'np', 'tf' or 'torch'.
        device: The torch device to place the result on.

    Returns:
        The scaled data in `framework`.

    Raises:
        ValueError: If `framework` is not one of the three.

    Example:
        >>> get_scaled_data((0.5, 1.0), 2.0).tolist()
        [1.0, 2.0]
    """
    if framework not in ("np", "tf", "torch"):
        raise ValueError(f"get_scaled_data: framework must be 'np', 'tf' or 'torch', got {framework!r}")
    scaled = np.asarray(data, dtype=np.float32) * np.float32(scale_factor)
    if framework == "np":
        return scaled
    result = to_tensor(scaled, target_type=framework)
    if framework == "torch" and device is not None:
        result = result.to(device)
    return result
