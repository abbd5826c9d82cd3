"""`RandomFog`: add fog to an image."""
from __future__ import annotations

from typing import Iterable, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RandomFog"]


@fe_export("fe.op.numpyop.univariate.random_fog.RandomFog", "fe.op.numpyop.univariate.RandomFog")
class RandomFog(ImageOnlyAlbumentation):
    """Add fog to an image.

    A wrapper of albumentations' `RandomFog`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        fog_coef_lower: Lower limit for fog intensity coefficient. Should be in the range [0, 1].
        fog_coef_upper: Upper limit for fog intensity coefficient. Should be in the range [0, 1].
        alpha_coef: Transparency of the fog circles. Should be in the range [0, 1].

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
                 fog_coef_lower: float = 0.3,
                 fog_coef_upper: float = 1.0,
                 alpha_coef: float = 0.08) -> None:
        albumentations = import_albumentations("RandomFog")
        func = albumentations.RandomFog(fog_coef_range=(fog_coef_lower, fog_coef_upper), alpha_coef=alpha_coef, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
