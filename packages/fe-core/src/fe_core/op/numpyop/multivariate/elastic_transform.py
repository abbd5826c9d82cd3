"""`ElasticTransform`: deform the input elastically."""
from __future__ import annotations

from typing import Iterable, List, Optional, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.multivariate.multivariate import MultiVariateAlbumentation, fill_value

__all__ = ["ElasticTransform"]


@fe_export("fe.op.numpyop.multivariate.elastic_transform.ElasticTransform",
           "fe.op.numpyop.multivariate.ElasticTransform")
class ElasticTransform(MultiVariateAlbumentation):
    """Deform the input elastically.

    Args:
        alpha: Strength of the displacement.
        sigma: Smoothness (Gaussian sigma) of the displacement field.
        alpha_affine: Accepted for compatibility and ignored: albumentations 2 removed the affine part (use
            `Affine` before this op for it).
        interpolation: OpenCV interpolation flag for the image (cv2.INTER_*; default bilinear).
        border_mode: OpenCV border flag for pixels brought in from outside the image (cv2.BORDER_*; default
            reflect-101).
        value: Fill value for the image when `border_mode` is cv2.BORDER_CONSTANT (None: 0).
        mask_value: Fill value for masks when `border_mode` is cv2.BORDER_CONSTANT (None: 0).
        approximate: Whether to smooth the displacement with a fixed kernel size (faster on large images).
        same_dxdy: Whether to use the same random displacement for x and y (faster on large images).
        mode: Mode(s) to run in ('train', '!infer', ...); None runs in every mode.
        ds_id: Dataset id(s) to run on ('ds1', '!ds1', ...); None runs on every dataset.
        image_in: The key of the image to transform.
        mask_in: The key of a mask to transform the same way as the image.
        masks_in: Keys of masks (one mask per key) to transform the same way, or one key holding a list of masks.
        image_out: Where to write the image (default: `image_in`).
        mask_out: Where to write the mask (default: `mask_in`).
        masks_out: Where to write the masks (default: `masks_in`).

    Raises:
        AssertionError: If no input key is given.
        ValueError: If an argument is invalid (albumentations' validation error names it).
    """

    def __init__(self,
                 alpha: float = 34.0,
                 sigma: float = 4.0,
                 alpha_affine: float = 50.0,
                 interpolation: int = 1,
                 border_mode: int = 4,
                 value: Union[None, int, float, List[int], List[float]] = None,
                 mask_value: Union[None, int, float, List[int], List[float]] = None,
                 approximate: bool = False,
                 same_dxdy: bool = False,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 image_in: Optional[str] = None,
                 mask_in: Optional[str] = None,
                 masks_in: Optional[Iterable[str]] = None,
                 image_out: Optional[str] = None,
                 mask_out: Optional[str] = None,
                 masks_out: Optional[Iterable[str]] = None) -> None:
        name = type(self).__name__
        albumentations = import_albumentations(name)
        func = albumentations.ElasticTransform(alpha=alpha, sigma=sigma, interpolation=interpolation,
                                               border_mode=border_mode, fill=fill_value(value),
                                               fill_mask=fill_value(mask_value), approximate=approximate,
                                               same_dxdy=same_dxdy, p=1.0)
        self.alpha_affine = alpha_affine
        super().__init__(func, mode=mode, ds_id=ds_id, image_in=image_in, mask_in=mask_in, masks_in=masks_in,
                         image_out=image_out, mask_out=mask_out, masks_out=masks_out)
