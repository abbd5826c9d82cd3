"""`Hadamard`: integer class labels to rows of a Hadamard code (error-correcting output codes)."""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["Hadamard", "hadamard_code"]


def hadamard_code(n_classes: int, code_length: int) -> np.ndarray:
    """The float32 `(n_classes, code_length)` code book: rows of a Sylvester Hadamard matrix of order `code_length`.

    The first column, all ones in a Sylvester matrix, alternates -1, 1, -1, ... so that it carries information.

    Args:
        n_classes: Number of rows to keep.
        code_length: Order of the Hadamard matrix (a power of 2, >= n_classes).

    Returns:
        The code book; row `i` is the code of class `i`, with entries -1 and 1.

    Example:
        >>> hadamard_code(2, 2).tolist()
        [[-1.0, 1.0], [1.0, -1.0]]
    """
    matrix = np.ones((1, 1), dtype=np.float32)
    sign = np.array([[1, 1], [1, -1]], dtype=np.float32)
    while matrix.shape[0] < code_length:
        matrix = np.kron(sign, matrix)
    matrix[0::2, 0] = -1
    return np.ascontiguousarray(matrix[:n_classes])


@fe_export("fe.op.numpyop.univariate.hadamard.Hadamard", "fe.op.numpyop.univariate.Hadamard")
class Hadamard(UnivariateOp):
    """Convert integer labels into Hadamard code representations (float32 vectors of -1 and 1).

    A label `i` (an int, or an integer array with one element; a float holding a whole number such as 3.0 counts as
    that integer) becomes row `i` of the code book (`hadamard_code`).
    Batch-capable: a batch of labels (shape `(n,)` or `(n, 1)`) becomes `(n, code_length)` in one indexing call.

    Args:
        inputs: Key of the input tensor(s) to be converted.
        outputs: Key of the output tensor(s) in hadamard code representation.
        n_classes: How many classes are there in the inputs.
        code_length: What code length to use. Defaults to the smallest power of 2 which is >= the number of classes.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        ValueError: If an unequal number of `inputs` and `outputs` are provided, if `code_length` is not a positive
            power of 2 at least `n_classes`, or (when run) if a label is outside [0, n_classes).

    Example:
        >>> Hadamard("y", "y", n_classes=4).forward([1], {})[0].tolist()
        [1.0, -1.0, 1.0, -1.0]
    """

    batch_capable = True

    def __init__(self,
                 inputs: Union[str, List[str]],
                 outputs: Union[str, List[str]],
                 n_classes: int,
                 code_length: Optional[int] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
            raise ValueError(f"Hadamard n_classes must be a positive integer, got {n_classes!r}")
        self.n_classes = int(n_classes)
        if code_length is None:
            code_length = 1 << (self.n_classes - 1).bit_length()
        if isinstance(code_length, bool) or not isinstance(code_length, (int, np.integer)) or code_length <= 0 or \
                code_length & (code_length - 1):
            raise ValueError(f"Hadamard code_length must be a positive power of 2, but got {code_length!r}")
        if code_length < self.n_classes:
            raise ValueError(f"Hadamard code_length must be >= n_classes, but got {code_length} and {self.n_classes}")
        self.code_length = int(code_length)
        self.labels = hadamard_code(self.n_classes, self.code_length)

    def _lookup(self, indices: np.ndarray) -> np.ndarray:
        if indices.dtype.kind in "fb" and np.all(np.isfinite(indices)) and np.all(np.mod(indices, 1) == 0):
            indices = indices.astype(np.int64)  # float labels holding whole numbers (3.0) index like ints
        if indices.dtype.kind not in "iu":
            raise ValueError(f"Hadamard {self.inputs} expects integer labels (or floats holding whole numbers), got "
                             f"dtype {indices.dtype}" + (" with fractional values" if indices.dtype.kind == "f" else ""))
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_classes):
            raise ValueError(f"Hadamard {self.inputs} labels must be in [0, {self.n_classes}), got values in "
                             f"[{indices.min()}, {indices.max()}]")
        return self.labels[indices]

    def transform_sample(self, value: Any) -> np.ndarray:
        return self._lookup(np.asarray(value).squeeze())

    def transform_batch(self, values: Any) -> np.ndarray:
        values = np.asarray(values)
        return self._lookup(values.reshape((len(values),) + tuple(size for size in values.shape[1:] if size != 1)))
