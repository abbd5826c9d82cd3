"""Glue between fe's NumpyOps and albumentations: lazy imports, numpy-driven randomness, and the image-only base.

Randomness. albumentations 2.x transforms draw from their own generators (`transform.random_generator`, a numpy
`Generator`, and `transform.py_random`, a python `random.Random`). fe's Pipeline needs every random draw to come from
numpy's global random state: `enable_deterministic` seeds it, and the Pipeline records it when an epoch starts so a
mid-epoch resume can replay the epoch exactly. Reseeding a transform from `np.random.randint` on every call would do
that, but costs about as much as a small augmentation itself. Instead, `bind_to_numpy_global_rng` hands the transform
generators that *are* numpy's global random state: a `Generator` over the global `RandomState`'s own bit generator,
and a `random.Random` subclass whose `random()` and `getrandbits()` draw from that `Generator`. Every draw the
transform makes then advances numpy's global state, so `np.random.seed`, `np.random.get_state` and
`np.random.set_state` govern albumentations exactly as they govern `np.random.*`, at no per-call cost. `run_transform`
re-binds when the global bit generator was replaced (`np.random.set_bit_generator`).

Example:
    >>> import albumentations as A
    >>> flip = A.HorizontalFlip(p=0.5)
    >>> bind_to_numpy_global_rng(flip)
    >>> image = np.arange(6, dtype=np.uint8).reshape(1, 6)
    >>> np.random.seed(3); first = run_transform(flip, image=image)["image"]
    >>> np.random.seed(3); bool(np.array_equal(first, run_transform(flip, image=image)["image"]))
    True
"""
from __future__ import annotations

import random
from types import ModuleType
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.optional import import_optional

__all__ = ["import_albumentations", "import_cv2", "NumpyGlobalRandom", "numpy_global_generators",
           "bind_to_numpy_global_rng", "run_transform", "transform_image", "ImageOnlyAlbumentation", "to_bbox_params",
           "to_keypoint_params"]


def import_albumentations(feature: str) -> ModuleType:
    """Import albumentations, or raise one line naming `feature` and the `image` extra.

    Args:
        feature: What needs it (an op's class name), for the message.

    Raises:
        fe_core.optional.MissingExtraError: If albumentations (or OpenCV, which it needs) is not installed.
    """
    return import_optional("albumentations", extra="image", feature=feature)


def import_cv2(feature: str) -> ModuleType:
    """Import OpenCV (`cv2`), or raise one line naming `feature` and the `image` extra."""
    return import_optional("cv2", extra="image", feature=feature)


class NumpyGlobalRandom(random.Random):
    """A `random.Random` whose every draw comes from a numpy `Generator` (by default numpy's global random state).

    All of `random.Random`'s methods (`uniform`, `randint`, `choice`, `sample`, `shuffle`, ...) are built on
    `random()` and `_randbelow()` / `getrandbits()`, which this class takes from the generator; `gauss` draws from it
    directly. `seed()` does nothing: the state is numpy's, seeded through `np.random.seed` /
    `fe_core.enable_deterministic`.

    Args:
        generator: The numpy generator to draw from.
    """

    def __init__(self, generator: np.random.Generator) -> None:
        self._generator = generator
        super().__init__()
        self.random = generator.random  # type: ignore[method-assign]  # skips a python frame on the hot path

    def seed(self, a: Any = None, version: int = 2) -> None:  # pylint: disable=unused-argument
        """Ignored: the state belongs to numpy."""

    def random(self) -> float:
        """A float in [0, 1) from the numpy generator."""
        return self._generator.random()

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        """A uniform int in [0, n): the base of `randint`, `randrange`, `choice`, `sample` and `shuffle`.

        Below 2**32 it scales one 53-bit float (bias under n / 2**53); larger ranges use `getrandbits`.
        """
        if n <= 0x100000000:
            return int(self._generator.random() * n)
        bits = n.bit_length()
        value = self.getrandbits(bits)
        while value >= n:
            value = self.getrandbits(bits)
        return value

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """A normal draw from the numpy generator (python's `gauss` caches a second value outside numpy's state)."""
        return mu + sigma * float(self._generator.standard_normal())

    def getrandbits(self, k: int) -> int:
        """An int with `k` random bits from the numpy generator."""
        if k <= 0:
            return 0
        size = (k + 7) // 8
        return int.from_bytes(self._generator.bytes(size), "little") >> (size * 8 - k)

    def getstate(self) -> Tuple[Any, ...]:
        """Not available: save numpy's state (`np.random.get_state()`) instead."""
        raise NotImplementedError("NumpyGlobalRandom draws from numpy's global random state; save that instead")

    def setstate(self, state: Any) -> None:
        """Not available: restore numpy's state (`np.random.set_state()`) instead."""
        raise NotImplementedError("NumpyGlobalRandom draws from numpy's global random state; restore that instead")

    def __reduce__(self) -> Tuple[Any, Tuple[()]]:
        """Pickled as 'the one drawing from numpy's global state' (ops sent to spawned Pipeline workers)."""
        return _global_python_random, ()


_GENERATORS: Dict[str, Any] = {"bit_generator": None, "pair": None}


def numpy_global_generators() -> Tuple[np.random.Generator, NumpyGlobalRandom]:
    """A numpy `Generator` and a `random.Random` that both draw from numpy's global random state.

    The pair is built once per global bit generator and shared by all transforms.

    Returns:
        (generator, python_random).
    """
    bit_generator = np.random.get_bit_generator()
    if _GENERATORS["bit_generator"] is not bit_generator:
        generator = np.random.Generator(bit_generator)
        _GENERATORS["pair"] = (generator, NumpyGlobalRandom(generator))
        _GENERATORS["bit_generator"] = bit_generator
    return _GENERATORS["pair"]


def _global_python_random() -> "NumpyGlobalRandom":
    return numpy_global_generators()[1]


def bind_to_numpy_global_rng(transform: Any) -> None:
    """Make an albumentations transform (or Compose) draw all its randomness from numpy's global random state.

    Args:
        transform: An albumentations 2.x transform or composition (anything with `set_random_state`).
    """
    generator, python_random = numpy_global_generators()
    transform.set_random_state(generator, python_random)


def run_transform(transform: Any, **targets: Any) -> Dict[str, Any]:
    """Call an albumentations transform on `targets`, with its randomness taken from numpy's global random state.

    Args:
        transform: A transform already passed to `bind_to_numpy_global_rng`.
        **targets: The albumentations targets (`image=...`, `mask=...`, `bboxes=...`, ...).

    Returns:
        The transform's result dict.
    """
    pair = _GENERATORS["pair"]
    if pair is None or transform.random_generator is not pair[0] or \
            _GENERATORS["bit_generator"] is not np.random.get_bit_generator():
        bind_to_numpy_global_rng(transform)
    return transform(**targets)


def transform_image(transform: Any, image: np.ndarray) -> np.ndarray:
    """`run_transform(transform, image=image)["image"]`, with less call overhead (the hot path of image-only ops)."""
    pair = _GENERATORS["pair"]
    if pair is None or transform.random_generator is not pair[0] or \
            _GENERATORS["bit_generator"] is not np.random.get_bit_generator():
        bind_to_numpy_global_rng(transform)
    return transform(image=image)["image"]


@fe_export("fe.op.numpyop.univariate.univariate.ImageOnlyAlbumentation")
class ImageOnlyAlbumentation(NumpyOp):
    """The base of ops that wrap an albumentations image-only transform (pixel-level changes, no geometry).

    Randomness comes from numpy's global random state (see this module's docstring), so `enable_deterministic` repeats
    augmentations and a resumed run continues them exactly. When several keys are given, each value gets the same
    random parameters (the first value decides them; the others must have the same shape).

    Args:
        func: The albumentations `ImageOnlyTransform` to run.
        inputs: Key(s) of the images to transform.
        outputs: Key(s) to write the results to, as many as `inputs`.
        mode: Mode(s) to run in; None runs in every mode.
        ds_id: Dataset id(s) to run on; None runs on every dataset.

    Raises:
        ValueError: If `inputs` and `outputs` differ in number.

    Example:
        >>> import albumentations as A
        >>> op = ImageOnlyAlbumentation(A.InvertImg(p=1.0), inputs="x", outputs="x")
        >>> op.forward([np.zeros((2, 2), np.uint8)], {})[0]
        array([[255, 255],
               [255, 255]], dtype=uint8)
    """

    def __init__(self,
                 func: Any,
                 inputs: Union[str, Sequence[str]],
                 outputs: Union[str, Sequence[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs) or not self.inputs:
            raise ValueError(f"{type(self).__name__} needs as many outputs as inputs (at least one), got inputs "
                             f"{self.inputs} and outputs {self.outputs}")
        self.in_list, self.out_list = True, True
        self.func = func
        bind_to_numpy_global_rng(func)

    def get_state(self) -> Dict[str, Any]:
        """Nothing to checkpoint: the op's randomness is numpy's global state, which checkpoints save themselves."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Nothing to restore (see `get_state`); the script's configuration of the op always wins."""

    def forward(self, data: List[np.ndarray], state: Dict[str, Any]) -> List[np.ndarray]:
        """Transform each image with one draw of random parameters."""
        func = self.func
        first = transform_image(func, data[0])
        if len(data) == 1:
            return [first]
        params = func.params
        if not params:  # the transform decided not to apply (p < 1)
            return [first] + list(data[1:])
        return [first] + [func.apply_with_params(params, image=value)["image"] for value in data[1:]]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(inputs={self.inputs}, outputs={self.outputs}, func={self.func!r})"


def to_bbox_params(bbox_params: Any, feature: str) -> Optional[Any]:
    """An albumentations `BboxParams` from a format name ('coco', 'pascal_voc', 'albumentations', 'yolo') or as is."""
    if isinstance(bbox_params, str):
        return import_albumentations(feature).BboxParams(format=bbox_params)
    return bbox_params


def to_keypoint_params(keypoint_params: Any, feature: str) -> Optional[Any]:
    """An albumentations `KeypointParams` from a format name ('xy', 'yx', 'xya', 'xys', 'xyas', 'xysa') or as is."""
    if isinstance(keypoint_params, str):
        return import_albumentations(feature).KeypointParams(format=keypoint_params)
    return keypoint_params
