"""`RandomShadow`: add shadows to an image."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["RandomShadow"]


@fe_export("fe.op.numpyop.univariate.random_shadow.RandomShadow", "fe.op.numpyop.univariate.RandomShadow")
class RandomShadow(ImageOnlyAlbumentation):
    """Add shadows to an image.

    A wrapper of albumentations' `RandomShadow`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        shadow_roi: Region of the image where shadows will appear (x_min, y_min, x_max, y_max). All values should be in
            range [0, 1].
        num_shadows_lower: Lower limit for the possible number of shadows. Should be in range [0, `num_shadows_upper`].
        num_shadows_upper: Upper limit for the possible number of shadows. Should be in range [`num_shadows_lower`,
            inf].
        shadow_dimension: Number of edges in the shadow polygons.

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
                 shadow_roi: Tuple[float, float, float, float] = (0.0, 0.5, 1.0, 1.0),
                 num_shadows_lower: int = 1,
                 num_shadows_upper: int = 2,
                 shadow_dimension: int = 5) -> None:
        albumentations = import_albumentations("RandomShadow")
        func = albumentations.RandomShadow(shadow_roi=tuple(shadow_roi), num_shadows_limit=(num_shadows_lower,
                                           num_shadows_upper), shadow_dimension=shadow_dimension, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
