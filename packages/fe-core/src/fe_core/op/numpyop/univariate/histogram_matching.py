"""`HistogramMatching`: match an image's histogram to a reference image's."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.univariate._reference_images import ReferenceImageAlbumentation

__all__ = ["HistogramMatching"]


@fe_export("fe.op.numpyop.univariate.histogram_matching.HistogramMatching",
           "fe.op.numpyop.univariate.HistogramMatching")
class HistogramMatching(ReferenceImageAlbumentation):
    """Apply histogram matching.

    It manipulates the pixels of an input image so that its histogram matches the histogram of the reference image. If
    the images have multiple channels, the matching is done independently for each channel, as long as the number of
    channels is equal in the input image and the reference.

    A wrapper of albumentations' `HistogramMatching`. Its random parameters are drawn from numpy's global random state
    (so `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random
    parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        reference_images: Sequence of objects that will be converted to images by read_fn. Can either be path of images
            or numpy arrays (depends upon read_fn).
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        blend_ratio: Tuple of min and max blend ratio. Matched image will be blended with original with random blend
            factor for increased diversity of generated images.
        read_fn: User-defined function to read an image, tensor or numpy array. It gets an element of reference_images.

    Image types:
        uint8, float32

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
        ValueError: If an argument is outside the range albumentations accepts.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 reference_images: Union[Any, Iterable[Any]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 blend_ratio: Tuple[float, float] = (0.5, 1.0),
                 read_fn: Callable = lambda x: x) -> None:
        albumentations = import_albumentations("HistogramMatching")
        func = albumentations.HistogramMatching(blend_ratio=tuple(blend_ratio), p=1.0)
        super().__init__(func, reference_images, read_fn, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)

    def forward(self, data: List[np.ndarray], state: Dict[str, Any]) -> List[np.ndarray]:
        """Match each image's histogram; float images of any precision (and their references) are matched in float32
        and come back in their own dtype, as FastEstimator accepts them."""
        dtypes = [np.asarray(value).dtype for value in data]
        if not any(dtype.kind == "f" and dtype != np.float32 for dtype in dtypes):
            return super().forward(data, state)
        read_fn = self.read_fn
        self.read_fn = lambda reference: _float32(read_fn(reference))
        try:
            results = super().forward([_float32(value) for value in data], state)
        finally:
            self.read_fn = read_fn
        return [result.astype(dtype, copy=False) for result, dtype in zip(results, dtypes)]


def _float32(value: Any) -> np.ndarray:
    """A float image as float32 (the precision albumentations works in); other images as they are."""
    array = np.asarray(value)
    return array.astype(np.float32) if array.dtype.kind == "f" and array.dtype != np.float32 else array
