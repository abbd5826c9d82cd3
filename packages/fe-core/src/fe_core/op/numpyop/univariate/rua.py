"""`RUA` (Random Unidimensional Augmentation) and the ops it chooses from by default.

RUA applies, per sample, a number of augmentations drawn uniformly from a list, all with one strength `level` in
[0, 30]: every op of the list gets `set_rua_level(level / 30)`, and the number of ops applied grows from 1 (level 0)
to min(len(list), 5) (level 30), the fractional part being applied with that probability. The module also holds
FastEstimator's RUA-flavoured `Rotate`, `Identity`, `Equalize`, `Posterize`, `Solarize` and `OneOfMultiVar`.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.meta.one_of import OneOf
from fe_core.op.numpyop.meta.sometimes import Sometimes
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.univariate._pil_augment import PILAugment, from_pil, to_pil
from fe_core.op.numpyop.univariate._ranges import scale_range, symmetric_range
from fe_core.op.numpyop.univariate.autocontrast import AutoContrast
from fe_core.op.numpyop.univariate.brightness import Brightness
from fe_core.op.numpyop.univariate.color import Color
from fe_core.op.numpyop.univariate.contrast import Contrast
from fe_core.op.numpyop.univariate.posterize import NumBits
from fe_core.op.numpyop.univariate.posterize import Posterize as PosterizeAug
from fe_core.op.numpyop.univariate.sharpness import Sharpness
from fe_core.op.numpyop.univariate.shear_x import ShearX
from fe_core.op.numpyop.univariate.shear_y import ShearY
from fe_core.op.numpyop.univariate.translate_x import TranslateX
from fe_core.op.numpyop.univariate.translate_y import TranslateY
from fe_core.op.op import get_inputs_by_op, write_outputs_by_op
from fe_core.optional import import_optional

__all__ = ["Rotate", "Identity", "Equalize", "Posterize", "Solarize", "OneOfMultiVar", "RUA"]

_Keys = Union[str, Iterable[str]]
_Modes = Union[None, str, Iterable[str]]


@fe_export("fe.op.numpyop.univariate.rua.Rotate")
class Rotate(PILAugment):
    """Rotate the input by an angle selected randomly (degrees, counter-clockwise; corners fill with 0).

    A wrapper of Pillow's `Image.rotate`. As in FastEstimator's code, a single number `x` means the range `(-x, x)`.

    Args:
        inputs: Key(s) of images to be modified (uint8).
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        limit: Range from which the angle can be picked.

    Raises:
        MissingExtraError: If Pillow (the `image` extra) is not installed.
    """

    def __init__(self,
                 inputs: _Keys,
                 outputs: _Keys,
                 mode: _Modes = None,
                 ds_id: _Modes = None,
                 limit: Union[int, Tuple[int, int]] = 30) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.limit = symmetric_range(limit, "limit", "Rotate")

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Shrink `limit` around its middle to `magnitude_coef` of its width (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        self.limit = scale_range(self.limit, magnitude_coef)

    def draw(self) -> float:
        return float(np.random.uniform(self.limit[0], self.limit[1]))

    def apply(self, image: np.ndarray, params: float) -> np.ndarray:
        return from_pil(to_pil(image, "Rotate").rotate(params), image)


@fe_export("fe.op.numpyop.univariate.rua.Identity")
class Identity(NumpyOp):
    """Pass the input as-is (RUA's "no augmentation" choice).

    Args:
        inputs: Key(s) of images.
        outputs: Key(s) into which to write the images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
    """

    batch_capable = True

    def __init__(self, inputs: _Keys, outputs: _Keys, mode: _Modes = None, ds_id: _Modes = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.in_list, self.out_list = True, True

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Does nothing: there is no strength to set.

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return list(data)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return list(data)


@fe_export("fe.op.numpyop.univariate.rua.Equalize")
class Equalize(PILAugment):
    """Equalize the image histogram with Pillow's `ImageOps.equalize` (not random).

    Args:
        inputs: Key(s) of images to be modified (uint8).
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        MissingExtraError: If Pillow (the `image` extra) is not installed.
    """

    def __init__(self, inputs: _Keys, outputs: _Keys, mode: _Modes = None, ds_id: _Modes = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self._equalize = import_optional("PIL.ImageOps", extra="image", feature="Equalize").equalize

    def apply(self, image: np.ndarray, params: Any) -> np.ndarray:
        return from_pil(self._equalize(to_pil(image, "Equalize")), image)


def _bits_range(num_bits: Union[int, Tuple[int, int]], magnitude_coef: float) -> Tuple[int, int]:
    """RUA's posterize strength: a pair shrinks around its middle; a number `n` gives `(round(8 - coef * n), 8)`."""
    if isinstance(num_bits, (tuple, list)):
        low, high = scale_range((num_bits[0], num_bits[1]), magnitude_coef)
        return round(low), round(high)
    return round(8 - magnitude_coef * num_bits), 8


@fe_export("fe.op.numpyop.univariate.rua.Posterize")
class Posterize(PosterizeAug):
    """Reduce the number of bits for the image; RUA's variant (default 7 bits) with `set_rua_level`.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        num_bits: Number of high bits. If num_bits is a single value, the range will be [num_bits, num_bits]. A
            triplet of ints will be interpreted as [r, g, b], and a triplet of pairs as [[r1, r1], [g1, g2], [b1, b2]].
            Must be in the range [0, 8].

    Raises:
        MissingExtraError: If albumentations (the `image` extra) is not installed.
    """

    def __init__(self,
                 inputs: _Keys,
                 outputs: _Keys,
                 mode: _Modes = None,
                 ds_id: _Modes = None,
                 num_bits: NumBits = 7) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id, num_bits=num_bits)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set how many bits are kept from `magnitude_coef` (called by RUA): stronger keeps fewer bits.

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        num_bits: Any = self.num_bits
        if isinstance(num_bits, (tuple, list)) and len(num_bits) == 3:
            num_bits = tuple(_bits_range(bits, magnitude_coef) for bits in num_bits)
        else:
            num_bits = _bits_range(num_bits, magnitude_coef)
        self.num_bits = num_bits
        self.func = self._build(num_bits)


@fe_export("fe.op.numpyop.univariate.rua.Solarize")
class Solarize(PILAugment):
    """Invert all pixel values at or above a random threshold (uint8 images); RUA's variant.

    The threshold is `256 - round(u)` with `u ~ U(0, t)` for a single `threshold` t, or `u ~ U(threshold)` for a
    pair, so the default 256 can invert anything from nothing to the whole image.

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        threshold: Range for the solarizing threshold. If threshold is a single value 't', the range will be [0, t].
    """

    def __init__(self,
                 inputs: _Keys,
                 outputs: _Keys,
                 mode: _Modes = None,
                 ds_id: _Modes = None,
                 threshold: Union[int, Tuple[int, int], float, Tuple[float, float]] = 256) -> None:
        NumpyOp.__init__(self, inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.in_list, self.out_list = True, True
        self.threshold = tuple(threshold) if isinstance(threshold, (tuple, list)) else threshold

    def set_rua_level(self, magnitude_coef: Union[int, float]) -> None:
        """Scale the threshold by `magnitude_coef` (called by RUA).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """
        if isinstance(self.threshold, tuple):
            self.threshold = magnitude_coef * (self.threshold[1] - self.threshold[0]) + self.threshold[0]
        else:
            self.threshold = magnitude_coef * self.threshold

    def draw(self) -> int:
        if isinstance(self.threshold, tuple):
            return 256 - round(np.random.uniform(self.threshold[0], self.threshold[1]))
        return 256 - round(np.random.uniform(0, self.threshold))

    def apply(self, image: np.ndarray, params: int) -> np.ndarray:
        return np.where(image < params, image, 255 - image).astype(image.dtype, copy=False)


def _union(*key_lists: Iterable[str]) -> List[str]:
    """The keys of all lists, in first-seen order."""
    return list(dict.fromkeys(key for keys in key_lists for key in keys))


def _run_op(op: NumpyOp, store: Dict[str, Any], state: Dict[str, Any]) -> None:
    """Run one op on a sample dict in place (the op's inputs must be present)."""
    outputs = op.forward(get_inputs_by_op(op, store), state)
    if op.outputs:
        write_outputs_by_op(op, store, outputs)


@fe_export("fe.op.numpyop.univariate.rua.OneOfMultiVar")
class OneOfMultiVar(OneOf):
    """Perform one of several possible NumpyOps, chosen uniformly with numpy's global random generator.

    Note that OneOfMultiVar accepts both univariate and multivariate ops and allows the list of passed NumpyOps to
    have different input and output keys. OneOfMultiVar should not be used to wrap an op whose output key(s) do not
    already exist in the data dictionary: when another op is chosen, that key would not be written. Use a LambdaOp
    before it to create a default value for a new key.

    Args:
        *numpy_ops: A list of ops to choose between with uniform probability.

    Raises:
        ValueError: If no op is given, or the ops differ in mode or in their list-ness of inputs/outputs.
    """

    def __init__(self, *numpy_ops: NumpyOp) -> None:  # pylint: disable=super-init-not-called
        if not numpy_ops:
            raise ValueError("OneOfMultiVar needs at least one op")
        first = numpy_ops[0]
        for op in numpy_ops[1:]:
            if op.in_list != first.in_list or op.out_list != first.out_list:
                raise ValueError("All ops within OneOfMultiVar must share the same input/output configuration")
            if op.mode != first.mode:
                raise ValueError(f"All ops within OneOfMultiVar must share the same mode: {first!r} and {op!r} differ")
        outputs = _union(*(op.outputs for op in numpy_ops))
        inputs = _union(*(op.inputs for op in numpy_ops), outputs)
        NumpyOp.__init__(self, inputs=inputs, outputs=outputs, mode=first.mode, ds_id=first.ds_id)
        self.in_list, self.out_list = True, True
        self.ops = list(numpy_ops)

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        store = dict(zip(self.inputs, data))
        _run_op(self.ops[np.random.randint(len(self.ops))], store, state)
        return [store[key] for key in self.outputs]

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return NumpyOp.forward_batch(self, data, state)


_DEFAULT_CHOICES = ("Rotate", "Identity", "AutoContrast", "Equalize", "Posterize", "Solarize", "Sharpness",
                    "Contrast", "Color", "Brightness", "ShearX", "ShearY", "TranslateX", "TranslateY")


def _default_op(name: str, inputs: _Keys, outputs: _Keys, mode: _Modes, ds_id: _Modes) -> NumpyOp:
    """One of RUA's default augmentations, at full strength (RUA then scales it with `set_rua_level`)."""
    keys: Dict[str, Any] = {"inputs": inputs, "outputs": outputs, "mode": mode, "ds_id": ds_id}
    factories = {
        "Rotate": lambda: Rotate(limit=90, **keys),
        "Identity": lambda: Identity(**keys),
        "AutoContrast": lambda: AutoContrast(**keys),
        "Equalize": lambda: Equalize(**keys),
        "Posterize": lambda: Posterize(num_bits=7, **keys),
        "Solarize": lambda: Solarize(threshold=256, **keys),
        "Sharpness": lambda: Sharpness(limit=0.9, **keys),
        "Contrast": lambda: Contrast(limit=0.9, **keys),
        "Color": lambda: Color(limit=0.9, **keys),
        "Brightness": lambda: Brightness(limit=0.9, **keys),
        "ShearX": lambda: ShearX(shear_coef=0.5, **keys),
        "ShearY": lambda: ShearY(shear_coef=0.5, **keys),
        "TranslateX": lambda: TranslateX(shift_limit=0.33, **keys),
        "TranslateY": lambda: TranslateY(shift_limit=0.33, **keys),
    }
    return factories[name]()


@fe_export("fe.op.numpyop.univariate.rua.RUA", "fe.op.numpyop.univariate.RUA")
class RUA(NumpyOp):
    """Apply the RUA augmentation strategy.

    Note that all augmentation ops passed to RUA should have a set_rua_level method to modify their strength based on
    the level. Custom NumpyOps can be passed to the `choices` argument along with names of augmentations to add.
    Passing 'defaults' adds the default list of augmentations along with any custom NumpyOps specified by the user.
    The default augmentations are: 'Rotate', 'Identity', 'AutoContrast', 'Equalize', 'Posterize', 'Solarize',
    'Sharpness', 'Contrast', 'Color', 'Brightness', 'ShearX', 'ShearY', 'TranslateX' and 'TranslateY'. To add
    specific augmentations from the default list, their names can be passed. Ex: 'Rotate'. To remove specific
    augmentations from the list, you can negate their names. Ex: '!Rotate' will load all the augmentations except
    'Rotate'.

    Example combinations which are not allowed:
    choices = ['defaults', 'Rotate']        # augmentations from the default list are redundant with 'defaults'.
    choices = ['defaults', '!Rotate']       # negated augmentations automatically load the default list.
    choices = ['!Solarize', 'Rotate']       # Cannot mix negated and normal augmentations.

    RUA should not have augmentation ops whose output key(s) do not already exist in the data dictionary: when such an
    op is not chosen, its key would not be written. Use a LambdaOp before RUA to create a default value for a new key.

    Per sample, `n = level * (min(len(choices), 5) - 1) / 30 + 1` augmentations are applied: `int(n)` always, one
    more with probability `n % 1`, each drawn uniformly from the list (numpy's global random generator).

    Args:
        inputs: Key(s) of images to be modified.
        outputs: Key(s) into which to write the modified images.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        choices: List of augmentations to apply.
        level: Factor to set the range for magnitude of augmentation. Must be in the range [0, 30].

    Image types:
        uint8

    Raises:
        AssertionError: If augmentations to add and to remove are mixed.
        AttributeError: If an augmentation choice has no `set_rua_level` method.
        ValueError: If 'defaults' is given with names to add or remove, a name is unknown, no augmentation is left,
            or `level` is outside [0, 30].

    Example:
        >>> # RUA(inputs="x", outputs="x", choices=["!Solarize"], level=10)
    """

    def __init__(self,
                 inputs: _Keys,
                 outputs: _Keys,
                 mode: _Modes = None,
                 ds_id: _Modes = None,
                 choices: Union[str, NumpyOp, List[Union[str, NumpyOp]]] = "defaults",
                 level: Union[int, float] = 18) -> None:
        if not 0 <= level <= 30:
            raise ValueError(f"RUA level must be in the range [0, 30], got {level!r}")
        choice_list = list(choices) if isinstance(choices, (list, tuple)) else [choices]
        augmentations = self._parse_choices(choice_list, inputs, outputs, mode, ds_id)
        for op in augmentations:
            if not callable(getattr(op, "set_rua_level", None)):
                raise AttributeError(f"RUA augmentations should have a 'set_rua_level' method but it's not present in "
                                     f"op: {type(op).__name__}")
            op.set_rua_level(magnitude_coef=level / 30.0)
        in_keys = [inputs] if isinstance(inputs, str) else list(inputs)
        out_keys = _union([outputs] if isinstance(outputs, str) else list(outputs),
                          *(op.outputs for op in augmentations))
        super().__init__(inputs=_union(in_keys, *(op.inputs for op in augmentations), out_keys), outputs=out_keys,
                         mode=mode, ds_id=ds_id)
        self.in_list, self.out_list = True, True
        self.level = level
        count = level * (min(len(augmentations), 5) - 1) / 30 + 1
        guaranteed, partial = int(count), count % 1
        self.ops: List[NumpyOp] = [OneOfMultiVar(*augmentations) for _ in range(guaranteed)]
        if partial > 0:
            self.ops.append(Sometimes(OneOfMultiVar(*augmentations), prob=partial))

    @staticmethod
    def _parse_choices(choices: List[Union[str, NumpyOp]], inputs: _Keys, outputs: _Keys, mode: _Modes,
                       ds_id: _Modes) -> List[NumpyOp]:
        custom = [choice for choice in choices if not isinstance(choice, str)]
        remove = [choice[1:] for choice in choices if isinstance(choice, str) and choice.startswith("!")]
        add = [choice for choice in choices if isinstance(choice, str) and not choice.startswith("!")
               and choice != "defaults"]
        assert not (remove and add), f"RUA supports either add or remove ops, but not both. Found {add} and {remove}"
        for name in remove + add:
            if name not in _DEFAULT_CHOICES:
                raise ValueError(f"RUA: unknown augmentation {name!r}; the augmentations available are "
                                 f"{list(_DEFAULT_CHOICES)}")
        if remove:
            if "defaults" in choices:
                raise ValueError(f"RUA: can't provide 'defaults' with ops to remove, found: {remove}")
            names = [name for name in _DEFAULT_CHOICES if name not in remove]
        elif "defaults" in choices:
            if add:
                raise ValueError(f"RUA: can't pass 'defaults' with ops of the default list, found: {add}")
            names = list(_DEFAULT_CHOICES)
        else:
            names = add
        augmentations = [_default_op(name, inputs, outputs, mode, ds_id) for name in names] + custom
        if not augmentations:
            raise ValueError("RUA needs at least one augmentation in choices")
        return augmentations

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        store = dict(zip(self.inputs, data))
        for op in self.ops:
            _run_op(op, store, state)
        return [store[key] for key in self.outputs]
