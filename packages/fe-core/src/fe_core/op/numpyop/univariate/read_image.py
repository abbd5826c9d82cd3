"""`ReadImage`: read png/jpg (any OpenCV-readable) images from disk, as RGB arrays."""
from __future__ import annotations

import os
from typing import Any, Iterable, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp
from fe_core.optional import import_optional

__all__ = ["ReadImage"]

_IMREAD_COLOR = 1  # cv2.IMREAD_COLOR, without importing OpenCV when this module is imported
_NAMED_FLAGS = {"color": "IMREAD_COLOR", "gray": "IMREAD_GRAYSCALE", "grey": "IMREAD_GRAYSCALE"}
_COLOR_FLAGS = ("IMREAD_COLOR", "IMREAD_REDUCED_COLOR_2", "IMREAD_REDUCED_COLOR_4", "IMREAD_REDUCED_COLOR_8")


@fe_export("fe.op.numpyop.univariate.read_image.ReadImage", "fe.op.numpyop.univariate.ReadImage")
class ReadImage(UnivariateOp):
    """Read images from disk with OpenCV; color images come back as RGB `(H, W, 3)`, grey ones as `(H, W, 1)`.

    Args:
        inputs: Key(s) of paths to images to be loaded.
        outputs: Key(s) of images to be output.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        parent_path: Parent path that will be prepended to a given path.
        color_flag: 'color', 'gray'/'grey', or one of the `cv2.IMREAD_*` flags (default `cv2.IMREAD_COLOR`).

    Raises:
        AssertionError: If `inputs` and `outputs` have mismatched lengths, or the `color_flag` is unacceptable.
        MissingExtraError: If OpenCV (the `image` extra) is not installed.
        ValueError: (when run) If a file cannot be read as an image; the message names the path.

    Example:
        >>> # ReadImage(inputs="x", outputs="x", parent_path="/data/images")  ->  forward(["cat.png"], {})
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 parent_path: str = "",
                 color_flag: Union[str, int] = _IMREAD_COLOR) -> None:
        assert len(list(inputs) if not isinstance(inputs, str) else [inputs]) == \
            len(list(outputs) if not isinstance(outputs, str) else [outputs]), "Input and Output lengths must match"
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        assert (isinstance(color_flag, int) and not isinstance(color_flag, bool)) or color_flag in _NAMED_FLAGS, \
            f"ReadImage: unacceptable color_flag value {color_flag!r}; use 'color', 'gray', 'grey' or a cv2.IMREAD flag"
        self._cv2 = import_optional("cv2", extra="image", feature="ReadImage")
        self.parent_path = parent_path
        self.color_flag = getattr(self._cv2, _NAMED_FLAGS[color_flag]) if isinstance(color_flag, str) else color_flag
        self._to_rgb = self.color_flag in {getattr(self._cv2, name) for name in _COLOR_FLAGS}

    # With the Batch's default stacking, reading a batch's images in one call gives exactly the per-sample result.
    batch_capable = True
    batch_vectorised = False  # but it decodes file after file: the Pipeline's worker processes should run it

    def transform_sample(self, value: Any) -> np.ndarray:
        cv2 = self._cv2
        path = os.path.normpath(os.path.join(self.parent_path, str(value))) if self.parent_path else str(value)
        image = cv2.imread(path, self.color_flag)
        if not isinstance(image, np.ndarray):
            raise ValueError(f"ReadImage: cv2 did not read correctly for file \"{path}\"")
        if self._to_rgb:
            image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if image.ndim == 2:
            image = image[..., None]
        return image

    def transform_batch(self, values: Any) -> Any:
        """Read a batch of paths and stack the images (one loop, no per-image method calls: the per-image overhead
        is what separates a Pipeline from a hand-written read loop)."""
        cv2, flag, to_rgb, parent = self._cv2, self.color_flag, self._to_rgb, self.parent_path
        images = []
        for value in values.tolist() if isinstance(values, np.ndarray) else values:
            path = os.path.normpath(os.path.join(parent, str(value))) if parent else str(value)
            image = cv2.imread(path, flag)
            if not isinstance(image, np.ndarray):
                raise ValueError(f"ReadImage: cv2 did not read correctly for file \"{path}\"")
            if to_rgb:
                image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
            images.append(image[..., None] if image.ndim == 2 else image)
        return np.stack(images)
