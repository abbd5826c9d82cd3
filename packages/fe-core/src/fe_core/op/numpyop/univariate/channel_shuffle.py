"""`ChannelShuffle`: randomly rearrange the channels of an image."""
from __future__ import annotations

from typing import Iterable, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, import_albumentations

__all__ = ["ChannelShuffle"]


@fe_export("fe.op.numpyop.univariate.channel_shuffle.ChannelShuffle", "fe.op.numpyop.univariate.ChannelShuffle")
class ChannelShuffle(ImageOnlyAlbumentation):
    """Randomly rearrange channels of an image.

    A wrapper of albumentations' `ChannelShuffle`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Image types:
        int8, float32

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        albumentations = import_albumentations("ChannelShuffle")
        func = albumentations.ChannelShuffle(p=1.0)
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
