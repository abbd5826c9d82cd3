"""Hadamard error-correcting codes shared by the `HadamardCode` layers and the `UnHadamard` TensorOp.

A code of length L (a power of two) is the Sylvester Hadamard matrix of order L: L rows of +1/-1 that differ pairwise in
exactly L/2 positions. Class `i` is coded by row `i`. A prediction is a vector in [-1, 1]^L; its distance to each code
word is turned into class probabilities by inverse distance weighting, with an offset chosen so that a prediction equal
to a code word gets exactly `max_prob`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["hadamard_matrix", "default_code_length", "check_code_length", "distance_offset"]


def hadamard_matrix(order: int) -> np.ndarray:
    """The Sylvester Hadamard matrix of `order` (a power of two), as float32 +1/-1 entries.

    Example:
        >>> hadamard_matrix(2).tolist()
        [[1.0, 1.0], [1.0, -1.0]]
    """
    if order < 1 or order & (order - 1):
        raise ValueError(f"A Hadamard matrix order must be a positive power of 2, got {order}")
    matrix = np.ones((1, 1), dtype=np.float32)
    while matrix.shape[0] < order:
        matrix = np.block([[matrix, matrix], [matrix, -matrix]])
    return matrix


def default_code_length(n_classes: int) -> int:
    """The smallest power of 2 that is >= `n_classes`, or 16 if that is larger."""
    return max(16, 1 << max(0, int(n_classes) - 1).bit_length())


def check_code_length(n_classes: int, code_length: Optional[int], owner: str) -> int:
    """Validate `n_classes` / `code_length` (None picks the default) and return the code length.

    Raises:
        ValueError: If `n_classes` < 2, or `code_length` is not a power of 2 at least as large as `n_classes`.
    """
    if int(n_classes) < 2:
        raise ValueError(f"{owner} needs at least 2 classes, got n_classes={n_classes}")
    if code_length is None:
        return default_code_length(n_classes)
    if isinstance(code_length, bool) or int(code_length) != code_length or code_length < 2 \
            or int(code_length) & (int(code_length) - 1):
        raise ValueError(f"{owner} code_length must be a positive power of 2 (a multiple of 2), got {code_length}")
    if code_length < n_classes:
        raise ValueError(f"{owner} code_length ({code_length}) must be at least n_classes ({n_classes})")
    return int(code_length)


def distance_offset(n_classes: int, code_length: int, max_prob: float, power: float) -> float:
    """The offset added to half-L1 distances so that a prediction equal to a code word gets probability `max_prob`.

    At a code word, its own distance is 0 and every other class is L/2 away (Hadamard rows differ in L/2 places), so
    p = 1 / (1 + (n - 1) * (e / (L/2 + e))**power); solving p = max_prob for e gives the offset.
    """
    ratio = ((1.0 - max_prob) / ((n_classes - 1) * max_prob))**(1.0 / power)
    return float(ratio * (code_length / 2.0) / (1.0 - ratio))
