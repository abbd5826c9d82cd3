"""`ShearX`: randomly shear an image along the X axis (Pillow)."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

import numpy as np  # noqa: F401  (used in the example)

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate._pil_augment import ShearAugment

__all__ = ["ShearX"]


@fe_export("fe.op.numpyop.univariate.shear_x.ShearX", "fe.op.numpyop.univariate.ShearX")
class ShearX(ShearAugment):
    """Randomly shear the image along the X axis by `s ~ U(shear_coef)`, then resize it back to its size (bicubic).

    A wrapper of Pillow's `Image.transform`. One factor is drawn per call (from numpy's global random
    generator) and applied to every input key, so paired images get the same change.

    Args:
        inputs: Key(s) of images to be modified (uint8, `(H, W)`, `(H, W, 1)`, `(H, W, 3)` or `(H, W, 4)`).
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        shear_coef: Factor range for shear; a single float `x` means `(-x, x)`.

    Raises:
        MissingExtraError: If Pillow (the `image` extra) is not installed.

    Example:
        >>> op = ShearX(inputs="x", outputs="x")
        >>> op.forward([np.full((8, 8, 3), 100, dtype=np.uint8)], {})[0].shape
        (8, 8, 3)
    """

    axis = "x"

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 shear_coef: Union[float, Tuple[float, float]] = 0.3) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, shear_coef=shear_coef)
