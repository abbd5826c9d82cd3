"""Multivariate NumpyOps: one random draw per sample shared by image, masks, boxes and keypoints; FE arguments."""
from __future__ import annotations

import inspect
import random

import numpy as np
import pytest

pytest.importorskip("albumentations")

import fe_core.op.numpyop.multivariate as mv  # noqa: E402
from fe_core.op.numpyop.multivariate import (Affine, CenterCrop, Crop, CropAndPad, Flip, HorizontalFlip,  # noqa: E402
                                             MultiVariateAlbumentation, PadIfNeeded, RandomCrop, RandomCropNearBBox,
                                             RandomResizedCrop, ReadMat, Rotate, Transpose, VerticalFlip)

IMAGE = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
MASK = np.arange(6 * 8, dtype=np.uint8).reshape(6, 8)

# Required arguments that make each op produce an output of a known size from a 16x16 image.
REQUIRED = {
    "CenterCrop": dict(height=8, width=8), "RandomCrop": dict(height=8, width=8),
    "CropNonEmptyMaskIfExists": dict(height=8, width=8), "RandomResizedCrop": dict(height=8, width=8),
    "RandomSizedCrop": dict(min_max_height=(6, 10), height=8, width=8),
    "Resize": dict(height=8, width=8), "Crop": dict(x_max=8, y_max=8),
    "RandomCropNearBBox": dict(cropping_bbox_in="cb"),
    "LongestMaxSize": dict(max_size=8), "SmallestMaxSize": dict(max_size=8),
    "PadIfNeeded": dict(min_height=20, min_width=20),
    "RandomGridShuffle": dict(grid=(2, 2)), "CropAndPad": dict(px=2),
    "BBoxSafeRandomCrop": dict(bbox_in="b", bbox_params="pascal_voc"),  # these two need boxes to keep
    "RandomSizedBBoxSafeCrop": dict(height=8, width=8, bbox_in="b", bbox_params="pascal_voc"),
}
BOXES = np.array([[4, 4, 9, 9, 1]], dtype=np.float32)
ALL_OPS = [name for name in mv.__all__ if name not in ("MultiVariateAlbumentation", "ReadMat")]


def test_every_documented_multivariate_op_is_exported():
    assert set(mv.__all__) == {
        "Affine", "BBoxSafeRandomCrop", "CenterCrop", "Crop", "CropAndPad", "CropNonEmptyMaskIfExists",
        "ElasticTransform", "Flip", "GridDistortion", "HorizontalFlip", "LongestMaxSize", "MaskDropout",
        "MultiVariateAlbumentation", "OpticalDistortion", "PadIfNeeded", "RandomCrop", "RandomCropFromBorders",
        "RandomCropNearBBox", "RandomGridShuffle", "RandomResizedCrop", "RandomRotate90", "RandomScale",
        "RandomSizedBBoxSafeCrop", "RandomSizedCrop", "ReadMat", "Resize", "Rotate", "ShiftScaleRotate",
        "SmallestMaxSize", "Transpose", "VerticalFlip"}


@pytest.mark.parametrize("name", ALL_OPS)
def test_image_and_mask_get_the_same_spatial_transform(name):
    """A mask equal to the image's first channel must stay equal to it after any op (nearest interpolation aside,
    the transform is the same): we check shapes always, and values for ops that move pixels without resampling."""
    image = np.random.RandomState(0).randint(0, 255, (16, 16, 3)).astype(np.uint8)
    mask = (image[..., 0] > 127).astype(np.uint8)
    op = getattr(mv, name)(image_in="x", mask_in="m", **REQUIRED.get(name, {}))
    inputs = {"x": image, "m": mask, "cb": [2, 2, 12, 12], "b": BOXES}
    np.random.seed(1)
    out_image, out_mask = op.forward([inputs[key] for key in op.inputs], {})[:2]
    assert out_image.shape[:2] == out_mask.shape
    assert out_image.dtype == np.uint8 and out_mask.dtype == np.uint8
    if name in ("HorizontalFlip", "VerticalFlip", "Transpose", "Flip", "RandomRotate90", "CenterCrop", "Crop",
                "RandomCrop", "RandomCropFromBorders", "RandomGridShuffle"):
        np.testing.assert_array_equal(out_mask, (out_image[..., 0] > 127).astype(np.uint8))


# Crops whose windows FastEstimator draws from python's `random` (albumentations 1.x): fe draws them the same way
PYTHON_RANDOM_OPS = ("BBoxSafeRandomCrop", "RandomCropFromBorders")


@pytest.mark.parametrize("name", ALL_OPS)
def test_randomness_comes_from_numpys_global_state(name):
    image = np.random.RandomState(0).randint(0, 255, (16, 16, 3)).astype(np.uint8)
    op = getattr(mv, name)(image_in="x", mask_in="m", **REQUIRED.get(name, {}))
    inputs = {"x": image, "m": (image[..., 0] > 100).astype(np.uint8), "cb": [2, 2, 12, 12], "b": BOXES}
    data = [inputs[key] for key in op.inputs]
    seed = random.seed if name in PYTHON_RANDOM_OPS else np.random.seed
    seed(7)
    first = [op.forward(data, {})[0] for _ in range(4)]
    seed(7)
    second = [op.forward(data, {})[0] for _ in range(4)]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_random_ops_vary_between_samples():
    image = np.random.RandomState(0).randint(0, 255, (16, 16, 3)).astype(np.uint8)
    op = RandomCrop(height=8, width=8, image_in="x")
    np.random.seed(0)
    crops = [op.forward([image], {})[0] for _ in range(6)]
    assert any(not np.array_equal(crops[0], crop) for crop in crops[1:])


def test_horizontal_flip_moves_boxes_keypoints_and_masks_with_the_image():
    op = HorizontalFlip(image_in="x", mask_in="m", masks_in=["m1", "m2"], bbox_in="b", keypoints_in="k",
                        bbox_params="pascal_voc", keypoint_params="xy")
    assert op.inputs == ["x", "m", "m1", "m2", "b", "k"] and op.outputs == op.inputs
    boxes = np.array([[0, 0, 2, 3, 7]], dtype=np.float32)  # x_min, y_min, x_max, y_max, label
    keypoints = np.array([[1, 2]], dtype=np.float32)
    outputs = op.forward([IMAGE, MASK, MASK, MASK + 1, boxes, keypoints], {})
    image, mask, (mask1, mask2), out_boxes, out_keypoints = outputs  # a list of mask keys: one list, as FE
    np.testing.assert_array_equal(image, IMAGE[:, ::-1])
    np.testing.assert_array_equal(mask, MASK[:, ::-1])
    np.testing.assert_array_equal(mask1, MASK[:, ::-1])
    np.testing.assert_array_equal(mask2, MASK[:, ::-1] + 1)
    np.testing.assert_allclose(out_boxes, [[6, 0, 8, 3, 7]], atol=1e-4)  # the label column travels with its box
    np.testing.assert_allclose(out_keypoints, [[6, 2]], atol=1e-4)  # pixel x -> width - 1 - x


def test_outputs_default_to_inputs_and_can_be_renamed():
    op = VerticalFlip(image_in="x", mask_in="m", image_out="x2", mask_out="m2")
    assert op.inputs == ["x", "m"] and op.outputs == ["x2", "m2"]
    image, mask = op.forward([IMAGE, MASK], {})
    np.testing.assert_array_equal(image, IMAGE[::-1])
    np.testing.assert_array_equal(mask, MASK[::-1])


def test_masks_in_a_single_key_is_a_list_of_masks():
    op = Transpose(image_in="x", masks_in="ms")
    image, masks = op.forward([IMAGE, [MASK, MASK + 1]], {})
    assert image.shape == (8, 6, 3) and len(masks) == 2
    np.testing.assert_array_equal(masks[1], (MASK + 1).T)


def test_mask_only_inputs_work_without_an_image():
    op = CenterCrop(height=2, width=4, mask_in="m")
    (mask, ) = op.forward([MASK], {})
    np.testing.assert_array_equal(mask, MASK[2:4, 2:6])


def test_coco_boxes_that_leave_the_crop_are_dropped():
    op = Crop(x_min=0, y_min=0, x_max=4, y_max=4, image_in="x", bbox_in="b", bbox_params="coco")
    boxes = np.array([[0, 0, 2, 2, 1], [5, 4, 2, 2, 2]], dtype=np.float32)  # x, y, w, h, label
    image, out = op.forward([IMAGE, boxes], {})
    assert image.shape == (4, 4, 3)
    np.testing.assert_allclose(out, [[0, 0, 2, 2, 1]], atol=1e-4)


@pytest.mark.parametrize("op, expected", [
    (HorizontalFlip(image_in="x", mask_in="m"), lambda a: a[:, :, ::-1]),
    (VerticalFlip(image_in="x", mask_in="m"), lambda a: a[:, ::-1]),
    (Transpose(image_in="x", mask_in="m"), lambda a: a.swapaxes(1, 2)),
    (CenterCrop(height=3, width=4, image_in="x", mask_in="m"), None),
    (Crop(x_min=1, y_min=2, x_max=5, y_max=6, image_in="x", mask_in="m"), None),
])
def test_batch_path_equals_per_sample_path(op, expected):
    assert op.batch_capable
    images = np.stack([IMAGE, IMAGE + 1])
    masks = np.stack([MASK, MASK + 2])
    batch_images, batch_masks = op.forward_batch([images, masks], {})
    for index in range(2):
        sample_image, sample_mask = op.forward([images[index], masks[index]], {})
        np.testing.assert_array_equal(batch_images[index], sample_image)
        np.testing.assert_array_equal(batch_masks[index], sample_mask)
    assert batch_images.flags.c_contiguous
    if expected is not None:
        np.testing.assert_array_equal(batch_images, expected(images))


def test_ops_with_boxes_are_not_batch_capable_and_random_ops_never_are():
    assert not HorizontalFlip(image_in="x", bbox_in="b", bbox_params="coco").batch_capable
    assert not getattr(RandomCrop(height=2, width=2, image_in="x"), "batch_capable", False)


def test_batch_crop_that_does_not_fit_raises():
    op = CenterCrop(height=10, width=10, image_in="x")
    with pytest.raises(ValueError, match="CenterCrop"):
        op.forward_batch([np.stack([IMAGE, IMAGE])], {})


def test_missing_inputs_and_missing_formats_are_errors():
    with pytest.raises(AssertionError, match="at least one input"):
        HorizontalFlip()
    with pytest.raises(ValueError, match="bbox_params"):
        HorizontalFlip(image_in="x", bbox_in="b")
    with pytest.raises(ValueError, match="keypoint_params"):
        HorizontalFlip(image_in="x", keypoints_in="k")
    with pytest.raises(ValueError, match="masks_out"):
        HorizontalFlip(image_in="x", masks_in=["a", "b"], masks_out=["c"])


def test_documented_defaults():
    def defaults(cls):
        return {name: p.default for name, p in inspect.signature(cls).parameters.items()
                if p.default is not inspect.Parameter.empty and name not in ("mode", "ds_id") and
                not name.endswith(("_in", "_out", "_params"))}
    assert defaults(Rotate) == {"limit": 90, "interpolation": 1, "border_mode": 4, "value": None, "mask_value": None}
    assert defaults(PadIfNeeded) == {"min_height": 1024, "min_width": 1024, "border_mode": 4, "value": None,
                                     "mask_value": None}
    assert defaults(RandomResizedCrop) == {"scale": (0.08, 1.0), "ratio": (0.75, 4 / 3), "interpolation": 1}
    assert defaults(Crop) == {"x_min": 0, "y_min": 0, "x_max": 1024, "y_max": 1024}
    assert defaults(Affine)["border_handling"] == "constant" and defaults(Affine)["interpolation"] == "bilinear"
    assert list(inspect.signature(RandomCropNearBBox).parameters)[:2] == ["cropping_bbox_in", "max_part_shift"]


def test_pad_if_needed_pads_to_the_minimum_size_with_the_fill_value():
    op = PadIfNeeded(min_height=8, min_width=10, border_mode=0, value=9, mask_value=3, image_in="x", mask_in="m")
    image, mask = op.forward([IMAGE, MASK], {})
    assert image.shape == (8, 10, 3) and mask.shape == (8, 10)
    assert (image[0] == 9).all() and (mask[0] == 3).all()
    np.testing.assert_array_equal(image[1:7, 1:9], IMAGE)


def test_random_crop_near_bbox_reads_the_cropping_box_key():
    op = RandomCropNearBBox(cropping_bbox_in="crop", max_part_shift=0.0, image_in="x")
    assert op.inputs == ["x", "crop"] and op.outputs == ["x"]
    (image, ) = op.forward([IMAGE, [2, 1, 6, 4]], {})
    np.testing.assert_array_equal(image, IMAGE[1:4, 2:6])


def test_flip_picks_horizontal_vertical_or_both():
    op = Flip(image_in="x")
    np.random.seed(0)
    results = {op.forward([MASK], {})[0].tobytes() for _ in range(40)}
    assert results == {MASK[:, ::-1].tobytes(), MASK[::-1].tobytes(), MASK[::-1, ::-1].tobytes()}


def test_affine_maps_fe_arguments():
    still = Affine(image_in="x")  # no rotation, scale, shear or translation: the identity
    np.testing.assert_array_equal(still.forward([IMAGE], {})[0], IMAGE)
    shifted = Affine(translate=(2, 2), border_handling="constant", fill_value=0, interpolation="nearest_neighbor",
                     image_in="x", mask_in="m")
    image, mask = shifted.forward([IMAGE, MASK], {})
    assert image.shape == IMAGE.shape and mask.shape == MASK.shape
    with pytest.raises(ValueError, match="interpolation"):
        Affine(interpolation="spline", image_in="x")
    with pytest.raises(ValueError, match="border"):
        Affine(border_handling=["constant", "mirror"], image_in="x")


def test_crop_and_pad_draws_a_fill_value_per_sample_from_a_list():
    op = CropAndPad(px=1, pad_cval=[5, 200], keep_size=False, image_in="x")
    np.random.seed(0)
    corners = {int(op.forward([MASK], {})[0][0, 0]) for _ in range(20)}
    assert corners == {5, 200}


def test_read_mat_reads_and_renames_variables(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    scipy_io.savemat(str(tmp_path / "a.mat"), {"img": np.ones((2, 2)), "lbl": np.array([[3]])})
    op = ReadMat(inputs="file", outputs=["image", "label"], mat_keys=["img", "lbl"], parent_path=str(tmp_path))
    image, label = op.forward("a.mat", {})
    np.testing.assert_array_equal(image, np.ones((2, 2)))
    assert int(label[0, 0]) == 3
    with pytest.raises(KeyError, match="nope"):
        ReadMat(inputs="file", outputs="nope", parent_path=str(tmp_path)).forward("a.mat", {})
    with pytest.raises(ValueError, match="mat_keys"):
        ReadMat(inputs="file", outputs=["a", "b"], mat_keys="a")


def test_generic_base_wraps_any_dual_transform():
    albumentations = pytest.importorskip("albumentations")
    op = MultiVariateAlbumentation(albumentations.HorizontalFlip(p=1.0), image_in="x", keypoints_in="k",
                                   keypoint_params="xy")
    assert op.get_num_items(np.zeros((3, 2))) == 3 and op.get_num_items([[1, 2]]) == 1
    image, keypoints = op.forward([IMAGE, np.array([[0, 0]], np.float32)], {})
    np.testing.assert_array_equal(image, IMAGE[:, ::-1])
    np.testing.assert_allclose(keypoints, [[7, 0]], atol=1e-4)


def test_checkpoints_hold_no_configuration_of_albumentations_ops():
    from fe_core.checkpoint.object_state import get_object_state, set_object_state
    from fe_core.op.numpyop.meta import Sometimes
    op = Sometimes(RandomCrop(height=2, width=2, image_in="x"))
    state = get_object_state(op)
    assert state["ops"] == [{}] and state["attributes"]["prob"] == 0.5  # the Sometimes' own data, not the crop's
    fresh = Sometimes(RandomCrop(height=2, width=2, image_in="y"))
    set_object_state(fresh, {"ops": [{"_in_plan": (("image", 1, False), )}]})  # whatever a checkpoint says
    assert fresh.op.inputs == ["y"] and fresh.op.forward([IMAGE], {})[0].shape == (2, 2, 3)
