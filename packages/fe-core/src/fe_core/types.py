"""`fe.types`: the type names FastEstimator code annotates with, usable without importing a framework.

`Tensor`, `Array` and `Model` are TypeVars whose constraints name the framework types as strings (forward
references: 'torch.Tensor', 'tf.Tensor', ...), so annotations read as in FastEstimator while fe-core never imports
torch or TensorFlow, not even for type checkers. `MapDataset` is the protocol of a map-style dataset (`len(ds)` and `ds[i]`), and
`FilteredData` is what an op returns to drop a sample. `DataSequence` (a sequence or an array of any framework) works
in `isinstance` checks; `TensorT`, `ArrayT`, `ModelT` and `CollectionT` are TypeVars for functions that return the
type they are given.

Example:
    >>> from fe_core.types import Tensor
    >>> def double(x: Tensor) -> Tensor:
    ...     return x * 2
    >>> double(2)
    4
"""
from __future__ import annotations

from typing import Any, Collection, Protocol, Sequence, Sized, Tuple, TypeVar, Union, runtime_checkable

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Tensor", "Array", "Model", "Number", "BoundingBox", "KeyPoint", "MapDataset", "FilteredData", "DataSequence",
           "TensorT", "ArrayT", "ModelT", "CollectionT"]

Tensor = TypeVar("Tensor", "tf.Tensor", "tf.Variable", "torch.Tensor")
"""A framework tensor: a TensorFlow tensor or variable, or a torch tensor."""

Array = TypeVar("Array", "tf.Tensor", "tf.Variable", "torch.Tensor", np.ndarray)
"""A tensor of any framework, or a numpy array."""

Model = TypeVar("Model", "tf.keras.Model", "torch.nn.Module")
"""A model: a Keras model or a torch module."""

Number = Union[int, float, np.number]
"""A python or numpy number."""

BoundingBox = Tuple[Any, ...]
"""(x0, y0, width, height[, label]) with (x0, y0) the top left corner."""

KeyPoint = Tuple[Any, ...]
"""(x, y[, label]) measured from the top left of an image."""

TensorT = TypeVar("TensorT", "tf.Tensor", "tf.Variable", "torch.Tensor")
"""A framework tensor, where a function returns the kind of tensor it was given."""

ArrayT = TypeVar("ArrayT", "tf.Tensor", "tf.Variable", "torch.Tensor", np.ndarray)
"""A tensor of any framework or a numpy array, where a function returns the kind it was given."""

ModelT = TypeVar("ModelT", "tf.keras.Model", "torch.nn.Module")
"""A model, where a function returns the kind of model it was given."""

CollectionT = TypeVar("CollectionT", bound=Collection)
"""A collection, where a function returns the kind of collection it was given."""


def _is_array(value: Any) -> bool:
    """Whether `value` is a numpy array or a torch / TensorFlow tensor (by type only: no framework is imported)."""
    if isinstance(value, np.ndarray):
        return True
    from fe_core.backend.dispatch import framework_of  # pylint: disable=import-outside-toplevel
    return framework_of(type(value)) is not None and hasattr(value, "shape")


class _DataSequenceMeta(type):
    """`isinstance(x, DataSequence)`: x is a sequence (list, tuple, ...) or an array of any framework."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Sequence) or _is_array(instance)

    def __subclasscheck__(cls, subclass: type) -> bool:
        if issubclass(subclass, (Sequence, np.ndarray)):
            return True
        from fe_core.backend.dispatch import framework_of  # pylint: disable=import-outside-toplevel
        return framework_of(subclass) is not None and hasattr(subclass, "shape")


@fe_export("fe.types.DataSequence")
class DataSequence(metaclass=_DataSequenceMeta):
    """A sequence of values or an array (numpy, torch or TensorFlow), for annotations and `isinstance` checks.

    Example:
        >>> isinstance([1, 2], DataSequence), isinstance(np.zeros(3), DataSequence), isinstance(3, DataSequence)
        (True, True, False)
    """


@fe_export("fe.types.MapDataset")
@runtime_checkable
class MapDataset(Sized, Protocol):
    """A map-style dataset: it has a length and returns sample `index` from `dataset[index]`.

    Example:
        >>> isinstance([{"x": 1}], MapDataset)
        True
    """

    def __getitem__(self, index: int) -> Any:
        ...


fe_export("fe.types.Tensor")(Tensor)
fe_export("fe.types.Array")(Array)
fe_export("fe.types.Model")(Model)
fe_export("fe.types.Number")(Number)
fe_export("fe.types.BoundingBox")(BoundingBox)
fe_export("fe.types.KeyPoint")(KeyPoint)
fe_export("fe.types.FilteredData")(FilteredData)
fe_export("fe.types.TensorT")(TensorT)
fe_export("fe.types.ArrayT")(ArrayT)
fe_export("fe.types.ModelT")(ModelT)
fe_export("fe.types.CollectionT")(CollectionT)
