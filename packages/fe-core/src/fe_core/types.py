"""`fe.types`: the type names FastEstimator code annotates with, usable without importing a framework.

`Tensor`, `Array` and `Model` are TypeVars whose constraints name the framework types as strings (forward
references: 'torch.Tensor', 'tf.Tensor', ...), so annotations read as in FastEstimator while fe-core never imports
torch or TensorFlow, not even for type checkers. `MapDataset` is the protocol of a map-style dataset (`len(ds)` and `ds[i]`), and
`FilteredData` is what an op returns to drop a sample.

Example:
    >>> from fe_core.types import Tensor
    >>> def double(x: Tensor) -> Tensor:
    ...     return x * 2
    >>> double(2)
    4
"""
from __future__ import annotations

from typing import Any, Protocol, Sized, Tuple, TypeVar, Union, runtime_checkable

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Tensor", "Array", "Model", "Number", "BoundingBox", "KeyPoint", "MapDataset", "FilteredData"]

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
