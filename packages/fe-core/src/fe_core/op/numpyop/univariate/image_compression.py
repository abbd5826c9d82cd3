"""`ImageCompression`: degrade an image by JPEG or WebP compression."""
from __future__ import annotations

from typing import Any, Iterable, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["ImageCompression"]


@fe_export("fe.op.numpyop.univariate.image_compression.ImageCompression", "fe.op.numpyop.univariate.ImageCompression")
class ImageCompression(ImageOnlyAlbumentation):
    """Decrease the quality of an image by compressing and decompressing it.

    A wrapper of albumentations' `ImageCompression`. Its random parameters are drawn from numpy's global random state
    (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        quality_lower: Lower bound on the image quality. Should be in [0, 100] range for jpeg and [1, 100] for webp.
        quality_upper: Upper bound on the image quality, in the same range.
        compression_type: 'jpeg' or 'webp' (or an enum member named JPEG / WEBP, as FastEstimator's
            `ImageCompressionType`).

    Image types:
        uint8, float32

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 quality_lower: int = 99,
                 quality_upper: int = 100,
                 compression_type: Any = 'jpeg') -> None:
        albumentations = import_albumentations("ImageCompression")
        kind = getattr(compression_type, "name", compression_type)
        kind = {0: "jpeg", 1: "webp"}.get(kind, kind) if isinstance(kind, int) else str(kind).lower()
        if kind not in ("jpeg", "webp"):
            raise ValueError(f"ImageCompression compression_type must be 'jpeg' or 'webp', got {compression_type!r}")
        func = albumentations.ImageCompression(compression_type=kind, quality_range=(quality_lower, quality_upper),
                                               p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
