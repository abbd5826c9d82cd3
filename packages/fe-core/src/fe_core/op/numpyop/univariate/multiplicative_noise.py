"""`MultiplicativeNoise`: multiply an image by random factors."""
from __future__ import annotations

from typing import Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["MultiplicativeNoise"]


@fe_export("fe.op.numpyop.univariate.multiplicative_noise.MultiplicativeNoise",
           "fe.op.numpyop.univariate.MultiplicativeNoise")
class MultiplicativeNoise(ImageOnlyAlbumentation):
    """Multiply an image with random perturbations.

    A wrapper of albumentations' `MultiplicativeNoise`. Its random parameters are drawn from numpy's global random state
    (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        multiplier: If a single float, the image will be multiplied by this number. If tuple of floats then `multiplier`
            will be in the range [multiplier[0], multiplier[1]).
        per_channel: Whether to sample different multipliers for each channel of the image.
        elementwise: If False, multiply all pixels by one random value; if True, multiply image pixels with values that
            are pixelwise randomly sampled.

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
                 multiplier: Union[float, Tuple[float, float]] = (0.9, 1.1),
                 per_channel: bool = False,
                 elementwise: bool = False) -> None:
        albumentations = import_albumentations("MultiplicativeNoise")
        if isinstance(multiplier, (int, float)):
            multiplier = (multiplier, multiplier)
        func = albumentations.MultiplicativeNoise(multiplier=tuple(multiplier), per_channel=per_channel,
                                                  elementwise=elementwise, p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
