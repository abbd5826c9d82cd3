"""`FDA`: Fourier Domain Adaptation towards reference images."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Tuple, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import import_albumentations
from fe_core.op.numpyop.univariate._reference_images import ReferenceImageAlbumentation

__all__ = ["FDA"]


@fe_export("fe.op.numpyop.univariate.fda.FDA", "fe.op.numpyop.univariate.FDA")
class FDA(ReferenceImageAlbumentation):
    """Fourier Domain Adaptation. A simple style transfer can be implemented using this op: the low frequencies of the
    image's spectrum are replaced by those of a reference image.

    A wrapper of albumentations' `FDA`. Its random parameters are drawn from numpy's global random state (so
    `fe.enable_deterministic` repeats them), and with several input keys every image gets the same random parameters.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        reference_images: Sequence of objects that will be converted to images by read_fn. Can either be path of images
            or numpy arrays (depends upon read_fn).
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        beta_limit: Beta coefficient for FDA; a single value `b` means `(0, b)`.
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
                 beta_limit: Union[float, Tuple[float, float]] = 0.1,
                 read_fn: Callable = lambda x: x) -> None:
        albumentations = import_albumentations("FDA")
        func = albumentations.FDA(beta_limit=beta_limit, p=1.0)
        super().__init__(func, reference_images, read_fn, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
