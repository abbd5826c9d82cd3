"""Hadamard error-correcting codes shared by the `HadamardCode` layers and the `UnHadamard` TensorOp.

Class `i` is coded by row `i` of the code book of the `Hadamard` NumpyOp (`hadamard_code`: a Sylvester Hadamard matrix
of order L, a power of two, whose first column alternates), so labels coded in the pipeline and the layers' and
UnHadamard's decoding agree. Rows differ in at least L/2 positions. A prediction is a vector in [-1, 1]^L; its distance
to each code word is turned into class probabilities by inverse distance weighting, with an offset chosen so that a
prediction equal to a code word gets `max_prob` (at least; exactly when the other rows are L/2 away).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from fe_core.op.numpyop.univariate.hadamard import hadamard_code

__all__ = ["code_book", "default_code_length", "check_code_length", "distance_offset"]


def code_book(n_classes: int, code_length: int) -> np.ndarray:
    """The float32 (n_classes, code_length) code words (the `Hadamard` NumpyOp's).

    Example:
        >>> code_book(2, 2).tolist()
        [[-1.0, 1.0], [1.0, -1.0]]
    """
    return hadamard_code(n_classes, code_length)


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
