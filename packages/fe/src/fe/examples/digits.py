"""The data of the digits examples: scikit-learn's 8x8 handwritten digits (1,797 images, shipped with scikit-learn).

`load_digits_datasets` splits them into train/eval/test `NumpyDataset`s of `{"x": (8, 8) float32 in [0, 16],
"y": int64 label}`; `UpscaleDigits` turns the 8x8 images into the 28x28 that LeNet expects (each pixel repeated 3x3,
then a 2-pixel zero border, like MNIST's centred digits).
"""
from __future__ import annotations

from typing import Any, Iterable, Tuple, Union

import numpy as np

from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["load_digits_datasets", "UpscaleDigits"]


def load_digits_datasets(eval_fraction: float = 0.15,
                         test_fraction: float = 0.15,
                         seed: int = 0,
                         flatten: bool = False) -> Tuple[NumpyDataset, NumpyDataset, NumpyDataset]:
    """scikit-learn's digits, split at random (with a fixed seed) into train, eval and test datasets.

    Args:
        eval_fraction: The share of the 1,797 images held out for evaluation.
        test_fraction: The share held out for the final test.
        seed: The seed of the split.
        flatten: Give each image as its 64 pixels (for an MLP) instead of 8x8.

    Returns:
        (train, eval, test) datasets with keys 'x' (float32) and 'y' (int64).

    Raises:
        ImportError: If scikit-learn is not installed (the message says how to install it).
    """
    try:
        from sklearn.datasets import load_digits  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise ImportError("The digits examples need scikit-learn, which ships the data set: "
                          "pip install scikit-learn (or, from a clone of fe, pip install \"./packages/fe[examples]\")") from error
    digits = load_digits()
    images = digits.images.astype(np.float32)
    if flatten:
        images = images.reshape(len(images), -1)
    train = NumpyDataset({"x": images, "y": digits.target.astype(np.int64)})
    eval_data, test_data = train.split(eval_fraction, test_fraction, seed=seed)
    return train, eval_data, test_data


class UpscaleDigits(UnivariateOp):
    """Upscale 8x8 images to 28x28: repeat each pixel 3x3 (24x24), then pad 2 zero pixels on every side.

    Batch-capable: on a batch it works on all images in one numpy call.

    Args:
        inputs: Key(s) of 8x8 images (more leading axes are allowed on batches).
        outputs: Key(s) to write the 28x28 images to.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Example:
        >>> UpscaleDigits("x", "x").forward([np.ones((8, 8))], {})[0].shape
        (28, 28)
    """

    batch_capable = True
    scale = 3
    border = 2

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)

    def transform_sample(self, value: Any) -> np.ndarray:
        return self.transform_batch(np.asarray(value)[None])[0]

    def transform_batch(self, values: Any) -> np.ndarray:
        values = np.asarray(values)
        big = values.repeat(self.scale, axis=-2).repeat(self.scale, axis=-1)
        pad: Tuple[Tuple[int, int], ...] = ((0, 0),) * (big.ndim - 2) + ((self.border, self.border),) * 2
        return np.pad(big, pad)

    def __repr__(self) -> str:
        return f"UpscaleDigits(inputs={self.inputs}, outputs={self.outputs})"
