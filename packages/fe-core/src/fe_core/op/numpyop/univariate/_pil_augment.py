"""The base of the random image ops built on Pillow (FastEstimator's PIL-based RUA ops), and array <-> image glue."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Dict, Iterable, List, Tuple, Union

import numpy as np

from fe_core.op.numpyop.univariate._ranges import scale_range, symmetric_range
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.optional import import_optional

__all__ = ["PILAugment", "EnhanceAugment", "ShearAugment", "TranslateAugment", "load_pil", "to_pil", "from_pil"]


def load_pil(feature: str) -> ModuleType:
    """Import `PIL.Image` (with ImageEnhance, ImageOps loaded), or raise one line naming the `image` extra."""
    image = import_optional("PIL.Image", extra="image", feature=feature)
    import_optional("PIL.ImageEnhance", extra="image", feature=feature)
    import_optional("PIL.ImageOps", extra="image", feature=feature)
    return image


def to_pil(image: np.ndarray, feature: str) -> Any:
    """A PIL image of an `(H, W)`, `(H, W, 1)`, `(H, W, 3)` or `(H, W, 4)` uint8 array.

    Raises:
        ValueError: If the array is not a uint8 image of one of those shapes.
    """
    if image.dtype != np.uint8:
        raise ValueError(f"{feature} works on uint8 images, got dtype {image.dtype}")
    if image.ndim == 3 and image.shape[-1] == 1:
        image = image[..., 0]
    elif not (image.ndim == 2 or (image.ndim == 3 and image.shape[-1] in (3, 4))):
        raise ValueError(f"{feature} expects an image of shape (H, W), (H, W, 1), (H, W, 3) or (H, W, 4), "
                         f"got {image.shape}")
    image_module = sys.modules.get("PIL.Image") or load_pil(feature)
    return image_module.fromarray(np.ascontiguousarray(image))


def from_pil(picture: Any, like: np.ndarray) -> np.ndarray:
    """The array of a PIL image, with the channel axis of `like` restored for `(H, W, 1)` inputs."""
    out = np.asarray(picture)
    if like.ndim == 3 and out.ndim == 2:
        out = out[..., None]
    return out


class PILAugment(UnivariateOp):
    """A univariate image op whose random parameters are drawn once per call and shared by every input key.

    Subclasses implement `draw()` (random parameters, from numpy's global generator so that
    `fe.enable_deterministic` and resumed runs repeat them) and `apply(image, params)`. Pillow is imported when the
    op is built, so a missing `image` extra is reported at construction.

    Args:
        inputs: Key(s) of images to modify.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self._image = load_pil(type(self).__name__)

    def draw(self) -> Any:
        """Random parameters for one call (shared by all input keys)."""
        return None

    def apply(self, image: np.ndarray, params: Any) -> np.ndarray:
        """Transform one image with the drawn parameters."""
        raise NotImplementedError

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set the augmentation intensity (called by RUA); the default keeps the op as it is.

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """

    def transform_sample(self, value: Any) -> np.ndarray:
        return self.apply(np.asarray(value), self.draw())

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[np.ndarray]:
        params = self.draw()
        return [self.apply(np.asarray(value), params) for value in data]


class EnhanceAugment(PILAugment):
    """Scale one image property (brightness, color, contrast, sharpness) by `1 + u`, `u ~ U(limit)`, with Pillow.

    Args:
        inputs: Key(s) of images to modify.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        limit: Range of `u`; a single number `x` means `(-x, x)`.
    """

    enhancer: str = ""

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 limit: Union[float, Tuple[float, float]] = 0.54) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.limit = symmetric_range(limit, "limit", type(self).__name__)
        self._enhance = getattr(import_optional("PIL.ImageEnhance", extra="image"), self.enhancer)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Shrink `limit` around its middle to `magnitude_coef` of its width (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        self.limit = scale_range(self.limit, magnitude_coef)

    def draw(self) -> float:
        return 1.0 + np.random.uniform(self.limit[0], self.limit[1])

    def apply(self, image: np.ndarray, params: float) -> np.ndarray:
        name = type(self).__name__
        return from_pil(self._enhance(to_pil(image, name)).enhance(params), image)


class ShearAugment(PILAugment):
    """Shear along one axis by `s ~ U(shear_coef)` with Pillow (bicubic), then resize back to the input's size.

    Args:
        inputs: Key(s) of images to modify.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        shear_coef: Range of `s`; a single number `x` means `(-x, x)`.
    """

    axis: str = "x"

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 shear_coef: Union[float, Tuple[float, float]] = 0.3) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.shear_coef = symmetric_range(shear_coef, "shear_coef", type(self).__name__)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Shrink `shear_coef` around its middle to `magnitude_coef` of its width (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        self.shear_coef = scale_range(self.shear_coef, magnitude_coef)

    def draw(self) -> float:
        return float(np.random.uniform(self.shear_coef[0], self.shear_coef[1]))

    def apply(self, image: np.ndarray, params: float) -> np.ndarray:
        picture = to_pil(image, type(self).__name__)
        width, height = picture.size
        if self.axis == "x":
            shift = round(abs(params) * width)
            size = (width + shift, height)
            coefficients = (1.0, params, -shift if params > 0 else 0.0, 0.0, 1.0, 0.0)
        else:
            shift = round(abs(params) * height)
            size = (width, height + shift)
            coefficients = (1.0, 0.0, 0.0, params, 1.0, -shift if params > 0 else 0.0)
        pil = self._image
        picture = picture.transform(size, pil.Transform.AFFINE, coefficients, resample=pil.Resampling.BICUBIC)
        return from_pil(picture.resize((width, height), resample=pil.Resampling.BICUBIC), image)


class TranslateAugment(PILAugment):
    """Shift along one axis by `f * size`, `f ~ U(shift_limit)`, with Pillow (bicubic); uncovered pixels become 0.

    Args:
        inputs: Key(s) of images to modify.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
        shift_limit: Range of `f` as a fraction of the width (x) or height (y); a single number `x` means `(-x, x)`.
    """

    axis: str = "x"

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 shift_limit: Union[float, Tuple[float, float]] = 0.2) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.shift_limit = symmetric_range(shift_limit, "shift_limit", type(self).__name__)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Shrink `shift_limit` around its middle to `magnitude_coef` of its width (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        self.shift_limit = scale_range(self.shift_limit, magnitude_coef)

    def draw(self) -> float:
        return float(np.random.uniform(self.shift_limit[0], self.shift_limit[1]))

    def apply(self, image: np.ndarray, params: float) -> np.ndarray:
        picture = to_pil(image, type(self).__name__)
        width, height = picture.size
        if self.axis == "x":
            coefficients = (1.0, 0.0, params * width, 0.0, 1.0, 0.0)
        else:
            coefficients = (1.0, 0.0, 0.0, 0.0, 1.0, params * height)
        pil = self._image
        picture = picture.transform((width, height), pil.Transform.AFFINE, coefficients,
                                    resample=pil.Resampling.BICUBIC)
        return from_pil(picture, image)
