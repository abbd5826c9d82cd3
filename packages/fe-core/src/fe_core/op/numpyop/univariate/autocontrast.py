"""`AutoContrast`: stretch an image's histogram to the full range (Pillow)."""
from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate._pil_augment import PILAugment, from_pil, to_pil
from fe_core.optional import import_optional

__all__ = ["AutoContrast"]


@fe_export("fe.op.numpyop.univariate.autocontrast.AutoContrast", "fe.op.numpyop.univariate.AutoContrast")
class AutoContrast(PILAugment):
    """Adjust image contrast automatically: the darkest pixel becomes 0 and the brightest 255 (per channel).

    A wrapper of Pillow's `ImageOps.autocontrast`. It is not random; RUA's level does not change it.

    Args:
        inputs: Key(s) of images to be modified (uint8, `(H, W)`, `(H, W, 1)` or `(H, W, 3)`).
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        MissingExtraError: If Pillow (the `image` extra) is not installed.

    Example:
        >>> op = AutoContrast(inputs="x", outputs="x")
        >>> op.forward([np.array([[50, 100, 150]], dtype=np.uint8)], {})[0].tolist()
        [[0, 127, 255]]
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self._autocontrast = import_optional("PIL.ImageOps", extra="image", feature="AutoContrast").autocontrast

    def apply(self, image: np.ndarray, params: Any) -> np.ndarray:
        return from_pil(self._autocontrast(to_pil(image, "AutoContrast")), image)
