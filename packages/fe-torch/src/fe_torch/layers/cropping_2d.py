"""`Cropping2D`: crop the height and width of (batch, channels, height, width) tensors."""
from __future__ import annotations

from typing import Tuple, Union

import torch
from torch import nn

from fe_core.export import fe_export

__all__ = ["Cropping2D"]

Crop = Union[int, Tuple[Union[int, Tuple[int, int]], Union[int, Tuple[int, int]]]]


def _pair(value: Union[int, Tuple[int, int]], what: str) -> Tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return int(value[0]), int(value[1])
    raise ValueError(f"Cropping2D {what} cropping must be an int or a pair of ints, got {value!r}")


@fe_export("fe.layers.pytorch.cropping_2d.Cropping2D", "fe.layers.pytorch.Cropping2D")
class Cropping2D(nn.Module):
    """Crop along the last two (height, width) axes.

    Args:
        cropping: `n` removes n from every side; `(h, w)` removes h from top and bottom and w from left and right;
            `((top, bottom), (left, right))` gives each side (the two halves may mix the forms).

    Raises:
        ValueError: If `cropping` has an unacceptable form or value.

    Example:
        >>> x = torch.arange(100).view(1, 1, 10, 10)
        >>> Cropping2D(((1, 4), 4))(x)[0, 0].tolist()
        [[14, 15], [24, 25], [34, 35], [44, 45], [54, 55]]
    """

    def __init__(self, cropping: Crop = 0) -> None:
        super().__init__()
        if isinstance(cropping, int) and not isinstance(cropping, bool):
            height = width = (cropping, cropping)
        elif isinstance(cropping, (tuple, list)) and len(cropping) == 2:
            height, width = _pair(cropping[0], "height"), _pair(cropping[1], "width")
        else:
            raise ValueError(f"Cropping2D cropping must be an int, (h, w) or ((top, bottom), (left, right)), got "
                             f"{cropping!r}")
        if min(height + width) < 0:
            raise ValueError(f"Cropping2D cropping must not be negative, got {cropping!r}")
        self.cropping = (height, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        (top, bottom), (left, right) = self.cropping
        return x[..., top:x.shape[-2] - bottom, left:x.shape[-1] - right]
