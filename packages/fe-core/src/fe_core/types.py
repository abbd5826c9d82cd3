"""`fe.types`: the type names FastEstimator code annotates with and checks with `isinstance`, without a framework.

In FastEstimator `Tensor`, `Array`, `Model` and `DataSequence` are Unions of real classes (torch and TensorFlow
tensors, numpy arrays, ...). Here they are classes whose `isinstance` / `issubclass` checks resolve those real classes
lazily, from the frameworks already imported (`sys.modules`): an object of a framework cannot exist before its
framework is imported, so the answer is the same as the Union's, and fe-core never imports torch or TensorFlow. They
work in annotations (`x: Tensor`, `List[Tensor]`, `Optional[Array]`, `Tensor | None`) like any class; type checkers
see the Unions themselves. `MapDataset` is the protocol of a map-style dataset (`len(ds)` and `ds[i]`), and
`FilteredData` is what an op returns to drop a sample. `TensorT`, `ArrayT`, `ModelT` and `CollectionT` are TypeVars
for functions that return the type they are given.

Example:
    >>> from fe_core.types import Tensor, Array
    >>> def double(x: Tensor) -> Tensor:
    ...     return x * 2
    >>> double(2)
    4
    >>> isinstance(np.zeros(2), Array), isinstance(np.zeros(2), Tensor)
    (True, False)
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Collection, List, Protocol, Sized, Tuple, \
    TypeVar, Union, runtime_checkable

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Tensor", "Array", "Model", "Number", "BoundingBox", "KeyPoint", "MapDataset", "FilteredData",
           "DataSequence", "TensorT", "ArrayT", "ModelT", "CollectionT"]


def _attribute(module_name: str, path: str) -> Any:
    """`module.path` of an already imported module (None when the module is not imported or lacks the name)."""
    value: Any = sys.modules.get(module_name)
    for part in path.split("."):
        if value is None:
            return None
        value = getattr(value, part, None)
    return value if isinstance(value, type) else None


# Each entry: (module, attribute path) of one member class of the Union. Only modules already in sys.modules are read.
# Keras 3's variables (a model's weights) are no tf.Variable: they count as the tf.Variables Keras 2 models had.
_TENSOR_CLASSES = (("torch", "Tensor"), ("tensorflow", "Tensor"), ("tensorflow", "Variable"),
                   ("tensorflow", "distribute.DistributedValues"), ("keras", "Variable"))
_MODEL_CLASSES = (("torch", "nn.Module"), ("keras", "Model"), ("tf_keras", "Model"))


def _resolve(entries: Tuple[Tuple[str, str], ...]) -> Tuple[type, ...]:
    """The real classes of `entries` whose framework is imported now."""
    return tuple(klass for klass in (_attribute(module, path) for module, path in entries) if klass is not None)


class _UnionMeta(type):
    """A class standing for a Union of real classes that are resolved at each check (`_members()`)."""

    _members: Callable[[], Tuple[type, ...]]

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls._members())

    def __subclasscheck__(cls, subclass: type) -> bool:
        return isinstance(subclass, type) and issubclass(subclass, cls._members())

    def __repr__(cls) -> str:
        return f"fe.types.{cls.__name__}"


def _union_class(name: str, members: Callable[[], Tuple[type, ...]], doc: str) -> type:
    return _UnionMeta(name, (), {"__doc__": doc, "__module__": __name__, "_members": staticmethod(members)})


def _tensor_classes() -> Tuple[type, ...]:
    return _resolve(_TENSOR_CLASSES)


def _array_classes() -> Tuple[type, ...]:
    return (np.ndarray, ) + _resolve(_TENSOR_CLASSES)


def _model_classes() -> Tuple[type, ...]:
    return _resolve(_MODEL_CLASSES)


def _sequence_classes() -> Tuple[type, ...]:
    return (list, tuple, np.ndarray) + _resolve(_TENSOR_CLASSES)


if TYPE_CHECKING:  # what static type checkers see: FastEstimator's Unions (forward references: no framework import)
    Tensor = Union["tf.Tensor", "tf.Variable", "tf.distribute.DistributedValues", "torch.Tensor"]
    Array = Union["tf.Tensor", "tf.Variable", "tf.distribute.DistributedValues", "torch.Tensor", np.ndarray]
    Model = Union["keras.Model", "torch.nn.Module"]
    DataSequence = Union[List[Any], Tuple[Any, ...], Array]
else:
    Tensor = _union_class("Tensor", _tensor_classes,
                          "A framework tensor: a torch tensor, or a TensorFlow tensor, variable (a Keras 3 model's "
                          "weights included) or distributed value.")
    Array = _union_class("Array", _array_classes, "A tensor of any framework, or a numpy array.")
    Model = _union_class("Model", _model_classes, "A model: a torch module or a Keras (or tf-keras) model.")
    DataSequence = _union_class("DataSequence", _sequence_classes,
                                "A list or tuple of values, or an array (numpy, torch or TensorFlow).")

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
fe_export("fe.types.DataSequence")(DataSequence)
fe_export("fe.types.Number")(Number)
fe_export("fe.types.BoundingBox")(BoundingBox)
fe_export("fe.types.KeyPoint")(KeyPoint)
fe_export("fe.types.FilteredData")(FilteredData)
fe_export("fe.types.TensorT")(TensorT)
fe_export("fe.types.ArrayT")(ArrayT)
fe_export("fe.types.ModelT")(ModelT)
fe_export("fe.types.CollectionT")(CollectionT)
