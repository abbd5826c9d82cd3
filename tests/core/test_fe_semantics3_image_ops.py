"""FastEstimator semantics of image ops and displays: crops drawn as FastEstimator draws them (same seed, same
crop size), every multivariate op keeping grayscale HxW images and masks two-dimensional, and ImageDisplay taking
masks with their labels."""
from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("albumentations")

import fe_core.op.numpyop.multivariate as mv  # noqa: E402
from fe_core.op.numpyop.multivariate import Affine, BBoxSafeRandomCrop, RandomCropFromBorders, Rotate  # noqa: E402

BOXES = np.array([[12, 12, 5, 5, 1], [13, 13, 6, 6, 0]])  # coco boxes with a label column


def test_random_crop_from_borders_crop_sizes_follow_the_seed_as_in_fastestimator() -> None:
    random.seed(10)
    first = RandomCropFromBorders(image_in="x", crop_left=0.5, crop_right=0.1, crop_top=0.1, crop_bottom=0.1)
    assert first.forward([np.random.rand(28, 28, 3)], {})[0].shape == (27, 16, 3)
    second = RandomCropFromBorders(image_in="x", mask_in="m")
    image, mask = second.forward([np.random.rand(28, 28, 3), np.random.rand(28, 28, 3)], {})
    assert image.shape == mask.shape == (27, 24, 3)


def test_bbox_safe_random_crop_crop_sizes_follow_the_seed_as_in_fastestimator() -> None:
    random.seed(10)
    first = BBoxSafeRandomCrop(image_in="x", erosion_rate=0.1, bbox_in="b", bbox_params="coco")
    image, boxes = first.forward([np.random.rand(28, 28, 3), BOXES], {})
    assert image.shape == (23, 18, 3)
    assert boxes.shape == (2, 5) and boxes[:, 4].tolist() == [1, 0]  # both boxes kept, labels travel along
    assert (boxes[:, 0] + boxes[:, 2] <= 18 + 1e-4).all() and (boxes[:, 1] + boxes[:, 3] <= 23 + 1e-4).all()
    second = BBoxSafeRandomCrop(image_in="x", erosion_rate=0.5, mask_in="m", bbox_in="b", bbox_params="coco")
    image, mask, _ = second.forward([np.random.rand(28, 28, 3), np.random.rand(28, 28, 3), BOXES], {})
    assert image.shape == mask.shape == (22, 11, 3)


def test_crops_repeat_under_python_seed_and_differ_without_it() -> None:
    op = RandomCropFromBorders(image_in="x", crop_left=0.4, crop_right=0.4, crop_top=0.4, crop_bottom=0.4)
    image = np.random.rand(40, 40)
    random.seed(3)
    first = [op.forward([image], {})[0].shape for _ in range(5)]
    random.seed(3)
    assert [op.forward([image], {})[0].shape for _ in range(5)] == first
    assert len(set(first)) > 1


@pytest.mark.parametrize("op_fn", [lambda: Rotate(image_in="x", mask_in="m", limit=45),
                                   lambda: Affine(image_in="x", mask_in="m", rotate=30, scale=1.1),
                                   lambda: RandomCropFromBorders(image_in="x", mask_in="m")],
                         ids=["Rotate", "Affine", "RandomCropFromBorders"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_grayscale_image_and_mask_stay_two_dimensional(op_fn, dtype) -> None:
    image = (np.random.RandomState(0).rand(28, 28) * (255 if dtype == np.uint8 else 1)).astype(dtype)
    mask = (image > image.mean()).astype(np.uint8)
    np.random.seed(0)
    out_image, out_mask = op_fn().forward([image, mask], {})
    assert out_image.ndim == 2 and out_mask.shape == out_image.shape and out_image.dtype == dtype
    if not isinstance(op_fn(), RandomCropFromBorders):
        assert out_image.shape == (28, 28)


REQUIRED = {
    "CenterCrop": dict(height=8, width=8), "RandomCrop": dict(height=8, width=8),
    "CropNonEmptyMaskIfExists": dict(height=8, width=8), "RandomResizedCrop": dict(height=8, width=8),
    "RandomSizedCrop": dict(min_max_height=(6, 10), height=8, width=8), "Resize": dict(height=8, width=8),
    "Crop": dict(x_max=8, y_max=8), "RandomCropNearBBox": dict(cropping_bbox_in="cb"),
    "LongestMaxSize": dict(max_size=8), "SmallestMaxSize": dict(max_size=8),
    "PadIfNeeded": dict(min_height=32, min_width=32), "RandomGridShuffle": dict(grid=(2, 2)),
    "CropAndPad": dict(px=2), "BBoxSafeRandomCrop": dict(bbox_in="b", bbox_params="pascal_voc"),
    "RandomSizedBBoxSafeCrop": dict(height=8, width=8, bbox_in="b", bbox_params="pascal_voc"),
}


@pytest.mark.parametrize("name", [name for name in mv.__all__ if name not in ("MultiVariateAlbumentation", "ReadMat")])
def test_every_multivariate_op_keeps_hxw_images_and_masks_two_dimensional(name) -> None:
    image = (np.random.RandomState(1).rand(28, 28) * 255).astype(np.uint8)
    mask = (image > 127).astype(np.uint8)
    op = getattr(mv, name)(image_in="x", mask_in="m", **REQUIRED.get(name, {}))
    inputs = {"x": image, "m": mask, "cb": [2, 2, 20, 20], "b": np.array([[4, 4, 20, 20, 1]], np.float32)}
    np.random.seed(1)
    random.seed(1)
    out_image, out_mask = op.forward([inputs[key] for key in op.inputs], {})[:2]
    assert out_image.ndim == 2 and out_mask.shape == out_image.shape


# ------------------------------------------------------------------------------------------------- ImageDisplay
def _annotations(fig) -> list:
    return [annotation.text for annotation in fig.layout.annotations]


def test_image_display_takes_masks_with_their_labels() -> None:
    pytest.importorskip("plotly")
    from fe_core.util.display import BatchDisplay, ImageDisplay  # pylint: disable=import-outside-toplevel
    image = np.random.RandomState(0).rand(128, 128).astype(np.float32)
    mask = np.zeros((128, 128, 2), dtype=np.float32)
    mask[10:60, 10:50, 0] = 1.0
    mask[10:60, 70:120, 1] = 1.0
    display = ImageDisplay(image=image, masks=(mask, ["left", "right"]), title="lungs")
    assert display.mask_labels == ["left", "right"]
    fig = display.prepare()
    assert {"left", "right"} <= set(_annotations(fig))
    plain = ImageDisplay(image=image).prepare()
    assert len(fig.data) - len(plain.data) == 2  # one layer per mask channel
    as_list = ImageDisplay(image=image, masks=[mask * 255, np.array(["left", "right"])])  # 0-255, labels as array
    assert as_list.mask_labels == ["left", "right"] and as_list.masks.max() == 1.0
    batch = BatchDisplay(image=np.stack([image, image]), masks=(np.stack([mask, mask]), ["left", "right"]))
    assert [item.mask_labels for item in batch.items] == [["left", "right"]] * 2
    assert {"left", "right"} <= set(_annotations(batch.prepare()))
    with pytest.raises(AssertionError, match="label"):
        ImageDisplay(image=image, masks=(mask, ["only one"]))


# Univariate ops that are not image augmentations, need arguments, or need 3 channels (also in FastEstimator:
# albumentations refuses grayscale for them)
NOT_GRAYSCALE = {"ReadImage", "Tokenize", "WordtoId", "PadSequence", "Onehot", "Reshape", "ToArray", "ExpandDims",
                 "ChannelTranspose", "Calibrate", "Hadamard", "ImageOnlyAlbumentation", "UnivariateOp", "RUA", "FDA",
                 "HistogramMatching", "PixelDistributionAdaptation", "Binarize", "ChannelDropout", "ISONoise",
                 "RandomFog", "RandomRain", "RandomSnow", "RandomSunFlare", "Normalize", "FromFloat"}


def _univariate_image_ops():
    import inspect  # pylint: disable=import-outside-toplevel

    import fe_core.op.numpyop.univariate as uv  # pylint: disable=import-outside-toplevel
    return [name for name in sorted(uv.__all__)
            if name not in NOT_GRAYSCALE and inspect.isclass(getattr(uv, name))]


@pytest.mark.parametrize("name", _univariate_image_ops())
def test_univariate_image_ops_keep_hxw_images_two_dimensional(name) -> None:
    import fe_core.op.numpyop.univariate as uv  # pylint: disable=import-outside-toplevel
    image = (np.random.RandomState(2).rand(28, 28) * 255).astype(np.uint8)
    op = getattr(uv, name)(inputs="x", outputs="x")
    np.random.seed(2)
    random.seed(2)
    out = op.forward([image] if op.in_list else image, {})
    out = out[0] if isinstance(out, list) else out
    assert np.shape(out) == (28, 28)


@pytest.mark.parametrize("op_fn", [lambda: Rotate(image_in="x", masks_in=["x_mask1", "x_mask2"], limit=45),
                                   lambda: Affine(image_in="x", masks_in=["x_mask1", "x_mask2"], rotate=30)],
                         ids=["Rotate", "Affine"])
@pytest.mark.parametrize("shape", [(28, 28, 3), (28, 28)], ids=["rgb", "gray"])
def test_a_list_of_mask_keys_comes_back_as_one_list_of_whole_masks(op_fn, shape) -> None:
    data = [np.random.rand(*shape) for _ in range(3)]
    output = op_fn().forward(data, {})
    assert isinstance(output, list) and len(output) == 2
    assert output[0].shape == shape
    assert isinstance(output[1], list) and [mask.shape for mask in output[1]] == [shape, shape]


def test_the_pipeline_writes_each_mask_of_a_mask_key_list_to_its_key() -> None:
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.op.numpyop.meta import Sometimes  # pylint: disable=import-outside-toplevel
    from fe_core.op.numpyop.multivariate import HorizontalFlip  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    image = np.arange(4 * 8 * 8, dtype=np.float32).reshape(4, 8, 8)
    first, second = (image > 100).astype(np.uint8), (image > 200).astype(np.uint8)
    dataset = NumpyDataset({"x": image, "m1": first, "m2": second})
    for op in (HorizontalFlip(image_in="x", masks_in=["m1", "m2"]),
               Sometimes(HorizontalFlip(image_in="x", masks_in=["m1", "m2"]), prob=1.0)):
        batch = Pipeline(train_data=dataset, batch_size=4, ops=[op]).get_results(mode="train")
        for key, source in (("x", image), ("m1", first), ("m2", second)):
            np.testing.assert_array_equal(np.asarray(batch[key]), source[:, :, ::-1])
