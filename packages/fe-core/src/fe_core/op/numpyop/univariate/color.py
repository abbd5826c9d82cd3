"""`Color`: randomly change the color balance of an image (Pillow)."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

import numpy as np  # noqa: F401  (used in the example)

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate._pil_augment import EnhanceAugment

__all__ = ["Color"]


@fe_export("fe.op.numpyop.univariate.color.Color", "fe.op.numpyop.univariate.Color")
class Color(EnhanceAugment):
    """Randomly change the color balance (saturation) of an image by a factor `1 + u`, `u ~ U(limit)`.

    A wrapper of Pillow's `ImageEnhance.Color`. One factor is drawn per call (from numpy's global random
    generator) and applied to every input key, so paired images get the same change.

    Args:
        inputs: Key(s) of images to be modified (uint8, `(H, W)`, `(H, W, 1)`, `(H, W, 3)` or `(H, W, 4)`).
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        limit: Factor range; a single float `x` means `(-x, x)`. A factor of 0.0 gives a black and white image and
            1.0 the original.

    Raises:
        MissingExtraError: If Pillow (the `image` extra) is not installed.

    Example:
        >>> op = Color(inputs="x", outputs="x")
        >>> op.forward([np.full((8, 8, 3), 100, dtype=np.uint8)], {})[0].shape
        (8, 8, 3)
    """

    enhancer = "Color"

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 limit: Union[float, Tuple[float, float]] = 0.54) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, limit=limit)
