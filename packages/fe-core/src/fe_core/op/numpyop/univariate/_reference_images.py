"""The base of the albumentations ops that adapt an image towards reference images (FDA, HistogramMatching, ...)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Sequence, Union

import numpy as np

from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation, run_transform

__all__ = ["ReferenceImageAlbumentation"]


class ReferenceImageAlbumentation(ImageOnlyAlbumentation):
    """An image-only albumentations op that blends each image with one reference image drawn per call.

    The reference is chosen with numpy's global random generator among `reference_images` and read with `read_fn`
    (paths, arrays, ... whatever `read_fn` understands), then handed to the transform through its metadata key, the
    albumentations 2.x way. Every input key of a call gets the same reference and the same random parameters.

    Args:
        func: The albumentations transform (FDA, HistogramMatching, PixelDistributionAdaptation).
        reference_images: One reference or a sequence of them.
        read_fn: Turns a reference into an image array.
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If there is no reference image or `read_fn` is not callable.
    """

    def __init__(self,
                 func: Any,
                 reference_images: Union[Any, Sequence[Any]],
                 read_fn: Callable[[Any], np.ndarray],
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(func, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if isinstance(reference_images, (str, bytes, np.ndarray)) or not isinstance(reference_images, Sequence):
            reference_images = [reference_images]
        if not reference_images:
            raise ValueError(f"{type(self).__name__} needs at least one reference image")
        if not callable(read_fn):
            raise ValueError(f"{type(self).__name__} read_fn must be callable, got {read_fn!r}")
        self.reference_images = list(reference_images)
        self.read_fn = read_fn

    def forward(self, data: List[np.ndarray], state: Dict[str, Any]) -> List[np.ndarray]:
        func = self.func
        reference = self.read_fn(self.reference_images[np.random.randint(len(self.reference_images))])
        first = run_transform(func, image=data[0], **{func.metadata_key: [np.asarray(reference)]})["image"]
        if len(data) == 1:
            return [first]
        return [first] + [func.apply_with_params(func.params, image=value)["image"] for value in data[1:]]
