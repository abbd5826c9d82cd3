"""`MultiVariateAlbumentation`: the base of ops that apply one albumentations spatial transform consistently to an
image and its masks, bounding boxes and keypoints."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import (bind_to_numpy_global_rng, import_albumentations,
                                                       run_transform, to_bbox_params, to_keypoint_params,
                                                       transform_image)
from fe_core.op.numpyop.numpyop import NumpyOp

__all__ = ["MultiVariateAlbumentation", "BatchableMultiVariate", "INTERPOLATIONS", "BORDER_MODES", "interpolation_flag",
           "border_flag", "crop_or_raise", "fill_value"]

# FastEstimator's interpolation names -> OpenCV flags (cv2.INTER_*). OpenCV has no order-4/5 spline: the two highest
# orders use Lanczos (cv2.INTER_LANCZOS4), the closest OpenCV offers.
INTERPOLATIONS = {"nearest_neighbor": 0, "nearest": 0, "bilinear": 1, "bicubic": 2, "area": 3, "biquartic": 4,
                  "biquintic": 4, "lanczos": 4}
# FastEstimator's (scikit-image style) border names -> OpenCV flags (cv2.BORDER_*).
BORDER_MODES = {"constant": 0, "edge": 1, "replicate": 1, "symmetric": 2, "reflect": 4, "reflect_101": 4, "wrap": 3}

# (albumentations target name, number of data keys, whether those keys are gathered into one list)
_Plan = Tuple[Tuple[str, int, bool], ...]


def interpolation_flag(interpolation: Union[int, str], op: str) -> int:
    """An OpenCV interpolation flag from an int flag or a name ('nearest_neighbor', 'bilinear', 'bicubic', ...).

    Raises:
        ValueError: If the name is unknown.
    """
    if isinstance(interpolation, str):
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"{op}: interpolation must be one of {sorted(INTERPOLATIONS)} or a cv2.INTER_* flag, "
                             f"got {interpolation!r}")
        return INTERPOLATIONS[interpolation]
    return int(interpolation)


def border_flag(border: Union[int, str], op: str) -> int:
    """An OpenCV border flag from an int flag or a name ('constant', 'edge', 'symmetric', 'reflect', 'wrap').

    Raises:
        ValueError: If the name is unknown.
    """
    if isinstance(border, str):
        if border not in BORDER_MODES:
            raise ValueError(f"{op}: border mode must be one of {sorted(BORDER_MODES)} or a cv2.BORDER_* flag, got "
                             f"{border!r}")
        return BORDER_MODES[border]
    return int(border)


def _keys(value: Union[None, str, Iterable[str]]) -> Tuple[Tuple[str, ...], bool]:
    """(keys, grouped): a string is one key (holding a list of masks); an iterable is one key per mask."""
    if value is None:
        return (), False
    if isinstance(value, str):
        return (value, ), False
    return tuple(value), True


@fe_export("fe.op.numpyop.multivariate.multivariate.MultiVariateAlbumentation")
class MultiVariateAlbumentation(NumpyOp):
    """Apply an albumentations dual (spatial) transform to an image and, with the same random parameters, to its
    mask(s), bounding boxes and keypoints.

    All randomness comes from numpy's global random state (see `fe_core.op.numpyop.albumentations_support`), so
    `enable_deterministic` repeats augmentations and a resumed run continues them exactly. Bounding boxes are an array
    (or list) of rows `[*coords, *extra]` in `bbox_params`' format; extra columns (labels) travel with their box, and
    boxes that leave the image are dropped. Keypoints are rows `[*coords, *extra]` in `keypoint_params`' format. Both
    come back as float arrays of rows.

    Args:
        func: The albumentations transform (a DualTransform, or a composition of them).
        mode: Mode(s) to run in; None runs in every mode.
        ds_id: Dataset id(s) to run on; None runs on every dataset.
        image_in: The key of an image to be modified.
        mask_in: The key of a mask to be modified (with the same random factors as the image).
        masks_in: The list of mask keys to be modified (with the same random factors as the image); a single key
            holds a list (or array) of masks.
        bbox_in: The key of a bounding box(es) to be modified (with the same random factors as the image).
        keypoints_in: The key of keypoints to be modified (with the same random factors as the image).
        image_out: The key to write the modified image (defaults to `image_in` if None).
        mask_out: The key to write the modified mask (defaults to `mask_in` if None).
        masks_out: The list of keys to write the modified masks (defaults to `masks_in` if None).
        bbox_out: The key to write the modified bounding box(es) (defaults to `bbox_in` if None).
        keypoints_out: The key to write the modified keypoints (defaults to `keypoints_in` if None).
        bbox_params: Parameters defining the type of bounding box ('coco', 'pascal_voc', 'albumentations' or 'yolo'),
            or an albumentations `BboxParams`.
        keypoint_params: Parameters defining the type of keypoints ('xy', 'yx', 'xya', 'xys', 'xyas', 'xysa'), or an
            albumentations `KeypointParams`.
        extra_in_keys: More inputs, as {albumentations argument name: data key} (e.g. {"cropping_bbox": "crop"}).
        extra_out_keys: More outputs, as {albumentations result name: data key}.

    Raises:
        AssertionError: If none of the inputs (`image_in`, `mask_in`, ...) is given.
        ValueError: If bounding boxes or keypoints are given without their format, or `masks_out` has a different
            number of keys than `masks_in`.

    Example:
        >>> import albumentations as A
        >>> op = MultiVariateAlbumentation(A.HorizontalFlip(p=1.0), image_in="x", mask_in="m")
        >>> image, mask = op.forward([np.array([[1, 2]], np.uint8), np.array([[0, 1]], np.uint8)], {})
        >>> image.tolist(), mask.tolist()
        ([[2, 1]], [[1, 0]])
    """

    #: Whether the transform only moves pixels (a flip): then images and masks with more than three axes (volumes,
    #: `(H, W, D, C)`), which OpenCV cannot take, are moved by the same transform through a map of pixel indices.
    moves_pixels_only = False

    def __init__(self,
                 func: Any,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 image_in: Optional[str] = None,
                 mask_in: Optional[str] = None,
                 masks_in: Optional[Iterable[str]] = None,
                 bbox_in: Optional[str] = None,
                 keypoints_in: Optional[str] = None,
                 image_out: Optional[str] = None,
                 mask_out: Optional[str] = None,
                 masks_out: Optional[Iterable[str]] = None,
                 bbox_out: Optional[str] = None,
                 keypoints_out: Optional[str] = None,
                 bbox_params: Any = None,
                 keypoint_params: Any = None,
                 extra_in_keys: Optional[Dict[str, str]] = None,
                 extra_out_keys: Optional[Dict[str, str]] = None) -> None:
        name = type(self).__name__
        assert any((image_in, mask_in, masks_in, bbox_in, keypoints_in)), \
            f"{name} needs at least one input (image_in, mask_in, masks_in, bbox_in or keypoints_in)"
        masks_in_keys, masks_grouped = _keys(masks_in)
        masks_out_keys, _ = _keys(masks_out if masks_out is not None else masks_in)
        if len(masks_out_keys) != len(masks_in_keys):
            raise ValueError(f"{name}: masks_out {list(masks_out_keys)} must name as many keys as masks_in "
                             f"{list(masks_in_keys)}")
        ins = [("image", (image_in, ) if image_in else (), False), ("mask", (mask_in, ) if mask_in else (), False),
               ("masks", masks_in_keys, masks_grouped), ("bboxes", (bbox_in, ) if bbox_in else (), False),
               ("keypoints", (keypoints_in, ) if keypoints_in else (), False)]
        outs = [("image", (image_out or image_in, ) if image_in else (), False),
                ("mask", (mask_out or mask_in, ) if mask_in else (), False), ("masks", masks_out_keys, masks_grouped),
                ("bboxes", (bbox_out or bbox_in, ) if bbox_in else (), False),
                ("keypoints", (keypoints_out or keypoints_in, ) if keypoints_in else (), False)]
        ins += [(target, (key, ), False) for target, key in (extra_in_keys or {}).items()]
        outs += [(target, (key, ), False) for target, key in (extra_out_keys or {}).items()]
        ins = [entry for entry in ins if entry[1]]
        outs = [entry for entry in outs if entry[1]]
        super().__init__(inputs=[key for _, keys, _ in ins for key in keys],
                         outputs=[key for _, keys, _ in outs for key in keys],
                         mode=mode,
                         ds_id=ds_id)
        self.in_list, self.out_list = True, True
        self._in_plan: _Plan = tuple((target, len(keys), grouped) for target, keys, grouped in ins)
        self._out_plan: _Plan = tuple((target, len(keys), grouped) for target, keys, grouped in outs)
        if bbox_in and bbox_params is None:
            raise ValueError(f"{name}: bbox_in {bbox_in!r} needs bbox_params (the box format: 'coco', 'pascal_voc', "
                             f"'albumentations' or 'yolo')")
        if keypoints_in and keypoint_params is None:
            raise ValueError(f"{name}: keypoints_in {keypoints_in!r} needs keypoint_params (the keypoint format: "
                             f"'xy', 'yx', 'xya', 'xys', 'xyas' or 'xysa')")
        self.transform = func
        if bbox_in or keypoints_in or extra_in_keys or extra_out_keys:
            albumentations = import_albumentations(name)
            func = albumentations.Compose([func],
                                          bbox_params=to_bbox_params(bbox_params, name),
                                          keypoint_params=to_keypoint_params(keypoint_params, name))
        self.func = func
        bind_to_numpy_global_rng(func)
        #: One entry per value `forward` returns: None for one key's value, n for the list of a masks_in list's n keys
        #: (n > 1: FastEstimator's forward gathers them; one key's value comes back as it is); None when every value
        #: is one key's.
        self.output_groups: Optional[Tuple[Optional[int], ...]] = None
        if masks_grouped and len(masks_in_keys) > 1:
            self.output_groups = tuple(count if grouped else None for _, keys, grouped in outs
                                       for count in [len(keys)])
        # The common case (only an image) skips the generic target plumbing.
        self._image_only = self._in_plan == (("image", 1, False), ) and self._out_plan == (("image", 1, False), )
        # albumentations reads the image size from the image: without one, a blank stand-in of the mask's size is used
        self._needs_shape_image = not image_in

    @staticmethod
    def _shape_image(targets: Dict[str, Any]) -> np.ndarray:
        if "mask" in targets:
            reference = targets["mask"]
        elif "masks" in targets and len(targets["masks"]):
            reference = targets["masks"][0]
        else:
            raise ValueError("A MultiVariateAlbumentation without image_in needs a mask (mask_in or masks_in) to know "
                             "the image size")
        return np.zeros(np.shape(reference)[:2], dtype=np.uint8)

    def get_state(self) -> Dict[str, Any]:
        """Nothing to checkpoint: the op's randomness is numpy's global state, which checkpoints save themselves."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Nothing to restore (see `get_state`); the script's configuration of the op always wins."""

    def get_num_items(self, value: Any) -> int:
        """The number of items (masks, boxes, keypoints) in `value`: its length, or 1 for a single array."""
        if isinstance(value, np.ndarray):
            return int(value.shape[0]) if value.ndim else 1
        return len(value)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Transform one sample's image, masks, boxes and keypoints with one draw of random parameters.

        Returns one value per output key, except that masks given as a list of keys (`masks_in=[...]`) come back as
        one list, as FastEstimator's forward returns them: `[image, [mask1, mask2], ...]` (the Pipeline writes each
        mask to its key; see `output_groups`).
        """
        return self.group(self._forward_flat(data, state))

    def group(self, values: List[Any]) -> List[Any]:
        """One value per output key -> what `forward` returns (the masks of a list of keys gathered in one list)."""
        if self.output_groups is None:
            return values
        grouped: List[Any] = []
        position = 0
        for size in self.output_groups:
            grouped.append(values[position] if size is None else list(values[position:position + size]))
            position += 1 if size is None else size
        return grouped

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Transform a batch sample by sample (each with its own random draw); returns what `forward` does, with
        each value stacked over the batch."""
        if self.output_groups is None:
            return super().forward_batch(data, state)
        size = len(data[0]) if data else 0
        flat = [self._forward_flat([value[index] for value in data], state) for index in range(size)]
        return self.group([np.stack([result[i] for result in flat]) for i in range(len(self.outputs))])

    def _forward_flat(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """`forward` with one value per output key."""
        if self.moves_pixels_only and any(getattr(value, "ndim", 0) > 3 for value in data):
            return self._forward_volume(data)
        if self._image_only:
            return [transform_image(self.func, data[0])]
        targets: Dict[str, Any] = {}
        index = 0
        groups: Dict[str, List[Any]] = {}  # keys of a masks_in list that hold lists of masks: how many each
        for target, count, grouped in self._in_plan:
            if grouped:
                values = list(data[index:index + count])
                if any(isinstance(value, (list, tuple)) for value in values):
                    groups[target] = [len(value) if isinstance(value, (list, tuple)) else None for value in values]
                    values = [mask for value in values for mask in (value if isinstance(value, (list, tuple))
                                                                    else [value])]
                targets[target] = values
            else:
                targets[target] = data[index]
                if target == "masks" and isinstance(data[index], (list, tuple)):
                    groups[target] = []  # a list of masks comes back as a list (albumentations may stack it)
            index += count
        if self._needs_shape_image:
            targets["image"] = self._shape_image(targets)
        result = run_transform(self.func, **targets)
        outputs: List[Any] = []
        for target, count, grouped in self._out_plan:
            value = result[target]
            if grouped and target in groups:  # each key gets its masks back as a list, as it gave them
                position = 0
                for size in groups[target]:
                    outputs.append(value[position] if size is None else list(value[position:position + size]))
                    position += 1 if size is None else size
            elif grouped:
                outputs.extend(value[i] for i in range(count))
            else:
                outputs.append(list(value) if target in groups else value)
        return outputs

    def _forward_volume(self, data: List[Any]) -> List[Any]:
        """`forward` for volumes: the transform runs on a map of the `(H, W)` pixel indices (as the mask, with a blank
        image of that size), drawing the same random parameters as for an image of that size, and every image and
        mask is gathered through the moved map; boxes and keypoints are transformed as usual."""
        targets: Dict[str, Any] = {}
        index = 0
        for target, count, grouped in self._in_plan:
            targets[target] = list(data[index:index + count]) if grouped else data[index]
            index += count
        spatial = {target: targets.pop(target) for target in ("image", "mask", "masks") if target in targets}
        reference = spatial["image"] if "image" in spatial else spatial["mask"] if "mask" in spatial else \
            spatial["masks"][0]
        height, width = np.shape(reference)[:2]
        targets["image"] = np.zeros((height, width), dtype=np.uint8)
        targets["mask"] = np.arange(height * width, dtype=np.int32).reshape(height, width)
        result = run_transform(self.func, **targets)
        order = result["mask"]

        def move(value: Any) -> np.ndarray:
            value = np.asarray(value)
            return np.take(value.reshape(height * width, *value.shape[2:]), order, axis=0)

        outputs: List[Any] = []
        for target, count, grouped in self._out_plan:
            if target in spatial:
                value = spatial[target]
                if target == "masks":
                    moved = [move(mask) for mask in value]
                    outputs.extend(moved if grouped else [np.stack(moved) if isinstance(value, np.ndarray) else moved])
                else:
                    outputs.append(move(value))
            else:
                outputs.append(result[target])
        return outputs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(inputs={self.inputs}, outputs={self.outputs})"


class BatchableMultiVariate(MultiVariateAlbumentation):
    """A MultiVariateAlbumentation whose transform is fixed (no randomness, output shape independent of content), so
    images and masks of a whole batch can be transformed in one numpy call.

    Subclasses implement `transform_batch(array)`, which receives a batch (sample axis first, then height and width)
    and returns exactly what the albumentations transform returns for each sample, stacked. The op is batch-capable
    only when its inputs are images and masks (one key each, or mask lists given as one key per mask); boxes and
    keypoints go through albumentations per sample.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batch_capable = all(target in ("image", "mask") or (target == "masks" and grouped)
                                 for target, _, grouped in self._in_plan)

    def transform_batch(self, array: np.ndarray) -> np.ndarray:
        """Transform a batch of images or masks (sample axis first)."""
        raise NotImplementedError

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Transform a batch: one numpy call per key when batch-capable, else per sample."""
        if not self.batch_capable:
            return super().forward_batch(data, state)
        return self.group([self.transform_batch(np.asarray(value)) for value in data])


def crop_or_raise(array: np.ndarray, y_min: int, y_max: int, x_min: int, x_max: int, op: str) -> np.ndarray:
    """`array[:, y_min:y_max, x_min:x_max]` (a batch), raising like albumentations when the crop leaves the image.

    Raises:
        ValueError: If the crop window does not fit inside the images.
    """
    height, width = array.shape[1], array.shape[2]
    if y_max > height or x_max > width or y_min < 0 or x_min < 0:
        raise ValueError(f"{op}: crop window y[{y_min}:{y_max}] x[{x_min}:{x_max}] does not fit in images of size "
                         f"{height}x{width}")
    return np.ascontiguousarray(array[:, y_min:y_max, x_min:x_max])


def fill_value(value: Union[None, float, Sequence[float]]) -> Union[float, Tuple[float, ...]]:
    """An albumentations `fill`/`fill_mask` from FastEstimator's `value`/`mask_value` (None means 0)."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value
