"""`PadSequence`: pad (or truncate) sequences to one length."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["PadSequence"]


@fe_export("fe.op.numpyop.univariate.pad_sequence.PadSequence", "fe.op.numpyop.univariate.PadSequence")
class PadSequence(UnivariateOp):
    """Pad sequences to `max_len` with `value`; longer sequences are cut to their first `max_len` elements.

    Args:
        inputs: Key(s) of sequences to be padded.
        outputs: Key(s) of sequences that are padded.
        max_len: Maximum length of all sequences.
        value: Padding value.
        append: Pad after the sequence (True) or before it (False).
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        ValueError: If `max_len` is negative.

    Example:
        >>> PadSequence("x", "x", max_len=5).forward([np.array([4, 8, 2])], {})[0].tolist()
        [4, 8, 2, 0, 0]
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 max_len: int,
                 value: Union[str, int] = 0,
                 append: bool = True,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if int(max_len) < 0:
            raise ValueError(f"PadSequence max_len must be >= 0, got {max_len!r}")
        self.max_len = int(max_len)
        self.value = value
        self.append = append

    def transform_sample(self, value: Any) -> np.ndarray:
        sequence = np.asarray(value)
        missing = self.max_len - len(sequence)
        if missing <= 0:
            return sequence[:self.max_len]
        padding = np.full(missing, self.value)
        parts = (sequence, padding) if self.append else (padding, sequence)
        return np.concatenate(parts)
