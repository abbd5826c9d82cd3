"""`Posterize`: keep only the high bits of each color channel."""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["Posterize"]

NumBits = Union[int, Tuple[int, int], Tuple[int, int, int], Tuple[Tuple[int, int], Tuple[int, int], Tuple[int, int]]]


def _albumentations_bits(num_bits: Any) -> Any:
    """FastEstimator's `num_bits` forms in albumentations 2.x terms (a triplet becomes a list of per-channel pairs)."""
    if isinstance(num_bits, (list, tuple)) and len(num_bits) == 3:
        return [tuple(bits) if isinstance(bits, (list, tuple)) else (int(bits), int(bits)) for bits in num_bits]
    if isinstance(num_bits, (list, tuple)):
        return tuple(int(bits) for bits in num_bits)
    return int(num_bits)


@fe_export("fe.op.numpyop.univariate.posterize.Posterize", "fe.op.numpyop.univariate.Posterize")
class Posterize(ImageOnlyAlbumentation):
    """Reduce the number of bits for each color channel.

    A wrapper of albumentations' `Posterize`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        num_bits: Number of high bits. If num_bits is a single value, the range will be [num_bits, num_bits]. A
            triplet of ints will be interpreted as [r, g, b], and a triplet of pairs as [[r1, r1], [g1, g2], [b1, b2]].
            Must be in the range [0, 8].

    Image types:
        uint8

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If `num_bits` is outside [0, 8].
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 num_bits: NumBits = 4) -> None:
        self.num_bits = num_bits
        super().__init__(self._build(num_bits), inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)

    def _build(self, num_bits: Any) -> Any:
        albumentations = import_albumentations(type(self).__name__)
        return albumentations.Posterize(num_bits=_albumentations_bits(num_bits), p=1.0)
