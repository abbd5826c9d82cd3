"""FastEstimator's documented op behaviour that needs no framework (issue 28): NumpyOp meta ops, augmentation ops."""
from __future__ import annotations

from typing import Any, List

import numpy as np

from fe_core.op.numpyop import LambdaOp
from fe_core.op.numpyop.meta import Repeat


# ------------------------------------------------------------------------------------------------ item 2: meta ops
def test_numpyop_repeat_has_fastestimators_ops_attribute() -> None:
    add_one = LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")
    repeat = Repeat(add_one, repeat=3)
    assert repeat.ops == [add_one] and repeat.op is add_one
    repeat.ops[0] = LambdaOp(fn=lambda x: x + 2, inputs="x", outputs="x")  # users swap or tweak the op in place
    assert repeat.forward([np.array(0)], {"mode": "train"}) == [6]


# ------------------------------------------------------------------------------------------------ item 6
def test_hadamard_takes_float_labels_holding_whole_numbers() -> None:
    import pytest  # pylint: disable=import-outside-toplevel

    from fe_core.op.numpyop.univariate import Hadamard  # pylint: disable=import-outside-toplevel
    op = Hadamard(inputs="y", outputs="y", n_classes=4)
    assert op.forward([np.float32(1.0)], {})[0].tolist() == op.forward([1], {})[0].tolist()
    assert op.forward_batch([np.array([[2.0], [0.0]])], {})[0].tolist() == op.forward_batch([np.array([2, 0])],
                                                                                           {})[0].tolist()
    with pytest.raises(ValueError, match="fractional"):
        op.forward([np.float32(1.5)], {})


def test_mask_dropout_takes_multi_channel_masks() -> None:
    from fe_core.op.numpyop.multivariate import MaskDropout  # pylint: disable=import-outside-toplevel
    image = np.full((32, 32, 3), 200, dtype=np.uint8)
    mask = np.zeros((32, 32, 2), np.uint8)
    mask[4:10, 4:10, 0] = 1  # 36 pixels, channel 0
    mask[20:25, 20:25, 1] = 1  # 25 pixels, channel 1
    np.random.seed(3)
    out_image, out_mask = MaskDropout(max_objects=1, image_in="x", mask_in="m").forward([image, mask],
                                                                                         {"mode": "train"})
    assert out_mask.shape == (32, 32, 2)
    erased = int(out_image.reshape(-1, 3).min(axis=1).__eq__(0).sum())
    assert (erased, int(out_mask.sum())) in ((36, 25), (25, 36))  # one whole object gone from image and mask
    out_image, out_mask = MaskDropout(max_objects=(2, 2), image_in="x", mask_in="m").forward([image, mask],
                                                                                         {"mode": "train"})
    assert int(out_mask.sum()) == 0 and int((out_image == 0).all(axis=-1).sum()) == 61


def test_histogram_matching_takes_float_images() -> None:
    from fe_core.op.numpyop.univariate import HistogramMatching  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng(0)
    reference = rng.random((16, 16, 3)) * 0.5  # float64, values in [0, 0.5)
    op = HistogramMatching(inputs="x", outputs="x", reference_images=[reference], blend_ratio=(1.0, 1.0))
    image = rng.random((16, 16, 3))
    matched = op.forward([image], {"mode": "train"})[0]
    assert matched.dtype == np.float64 and matched.shape == image.shape
    assert float(matched.max()) <= 0.5 + 1e-6  # the reference's range


def test_multivariate_ops_give_mask_lists_back_grouped() -> None:
    from fe_core.op.numpyop.multivariate import HorizontalFlip  # pylint: disable=import-outside-toplevel
    image = np.arange(32 * 32 * 3, dtype=np.uint8).reshape(32, 32, 3)
    first, second = np.zeros((32, 32), np.uint8), np.zeros((32, 32), np.uint8)
    first[:, :4], second[:, :8] = 1, 1
    for masks_in in (["m"], "m"):  # a key holding a list of masks, named in a list or alone
        op = HorizontalFlip(image_in="x", masks_in=masks_in)
        out_image, out_masks = op.forward([image, [first, second]], {"mode": "train"})
        assert isinstance(out_masks, list) and len(out_masks) == 2  # grouped, not flattened into outputs
        assert np.array_equal(out_masks[0], first[:, ::-1]) and np.array_equal(out_masks[1], second[:, ::-1])
        assert np.array_equal(out_image, image[:, ::-1])


def test_random_crops_repeat_under_enable_deterministic() -> None:
    from fe_core.determinism import enable_deterministic  # pylint: disable=import-outside-toplevel
    from fe_core.op.numpyop.multivariate import BBoxSafeRandomCrop, RandomCropFromBorders  # pylint: disable=C0415
    image = np.random.RandomState(0).randint(0, 255, (64, 64, 3)).astype(np.uint8)
    boxes = np.array([[10, 10, 20, 20, 0]], dtype=np.float32)

    def crop(make: Any, data: List[Any]) -> List[np.ndarray]:
        enable_deterministic(42)
        return [np.asarray(value).copy() for value in make().forward(list(data), {"mode": "train"})]

    for make, data in ((lambda: BBoxSafeRandomCrop(image_in="x", bbox_in="b", bbox_params="pascal_voc"),
                        [image, boxes]), (lambda: RandomCropFromBorders(image_in="x"), [image])):
        first, second = crop(make, data), crop(make, data)
        assert all(np.array_equal(a, b) for a, b in zip(first, second))
