"""`HadamardCode`: an error-correcting output layer for torch (drop-in replacement for a final softmax layer)."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import torch
from torch import nn

from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.tensorop.hadamard import check_code_length, distance_offset, code_book

__all__ = ["HadamardCode"]


def check_code_options(max_prob: float, power: float, owner: str = "HadamardCode") -> None:
    """Raise ValueError unless 0 < max_prob < 1 and power > 0."""
    if not 0.0 < max_prob < 1.0:
        raise ValueError(f"{owner} max_prob must be in (0, 1), got {max_prob}")
    if power <= 0:
        raise ValueError(f"{owner} power must be greater than 0, got {power}")


@fe_export("fe.layers.pytorch.hadamard.HadamardCode", "fe.layers.pytorch.HadamardCode")
class HadamardCode(nn.Module):
    """Map features onto Hadamard code words and return class probabilities.

    Each input head gets a linear layer producing its share of the `code_length` code bits; the bits are squashed with
    tanh into [-1, 1], their (half) L1 distance to each class's code word is computed, and the distances become
    probabilities by inverse distance weighting (a prediction exactly on a code word gets `max_prob`).

    Args:
        in_features: Features of the input (shape (batch, in_features)), or a list of them for several heads whose
            outputs are combined (inputs then come as a list of tensors).
        n_classes: How many classes to map onto (at least 2).
        code_length: Code length, a power of 2 >= n_classes; default: the smallest such power, at least 16.
        max_prob: The largest probability a class can get, in (0, 1).
        power: The inverse-distance-weighting power (> 0).

    Raises:
        ValueError: If `code_length`, `max_prob`, `power` or `n_classes` are invalid.

    Example:
        >>> layer = HadamardCode(in_features=[8, 8], n_classes=10)
        >>> layer([torch.zeros(2, 8), torch.zeros(2, 8)]).shape
        torch.Size([2, 10])
    """

    def __init__(self,
                 in_features: Union[int, List[int]],
                 n_classes: int,
                 code_length: Optional[int] = None,
                 max_prob: float = 0.95,
                 power: float = 1.0) -> None:
        super().__init__()
        self.code_length = check_code_length(n_classes, code_length, "HadamardCode")
        check_code_options(max_prob, power)
        self.in_features = [int(features) for features in to_list(in_features)]
        if not self.in_features or self.in_features[0] < 1 or len(self.in_features) > self.code_length:
            raise ValueError(f"HadamardCode needs 1 to code_length ({self.code_length}) heads of positive width, got "
                             f"in_features={in_features}")
        self.n_classes = int(n_classes)
        self.max_prob = float(max_prob)
        self.power = float(power)
        heads = len(self.in_features)
        sizes = [self.code_length // heads + (1 if index < self.code_length % heads else 0) for index in range(heads)]
        self.heads = nn.ModuleList(nn.Linear(features, size) for features, size in zip(self.in_features, sizes))
        self.register_buffer("codes", torch.from_numpy(code_book(self.n_classes, self.code_length)))
        self.offset = distance_offset(self.n_classes, self.code_length, self.max_prob, self.power)

    def forward(self, x: Union[torch.Tensor, Sequence[torch.Tensor]]) -> torch.Tensor:
        inputs = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(inputs) != len(self.heads):
            raise ValueError(f"HadamardCode was built for {len(self.heads)} input head(s), got {len(inputs)}")
        bits = torch.tanh(torch.cat([head(value) for head, value in zip(self.heads, inputs)], dim=-1))
        codes = self.codes.to(bits.dtype)
        # with code entries of +-1 and bits in [-1, 1], |bit - code| = 1 - bit * code: the L1 distance is a matmul
        distance = (self.code_length - bits @ codes.t()) / 2.0 + self.offset  # (batch, n_classes)
        weights = distance.pow(-self.power)
        return weights / weights.sum(dim=-1, keepdim=True)
