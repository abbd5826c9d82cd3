"""Types and conversions of (nested collections of) tensors: `to_tensor`, `cast`, `to_type`, `to_shape`,
`convert_tensor_precision`.

Collections are dicts, lists, tuples and sets, walked recursively; their structure is kept. Dtypes are named as numpy
names them ('uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64', 'bool', ...), or given by a
tensor whose dtype is to be matched (of any framework).
"""
from __future__ import annotations

import copy
from typing import Any, Callable, TypeVar, Union

import numpy as np

from fe_core.backend.dispatch import Dispatch, backend_module
from fe_core.export import fe_export

__all__ = ["to_tensor", "cast", "to_type", "to_shape", "convert_tensor_precision", "dtype_name", "map_leaves"]

Tensor = TypeVar("Tensor")
Collection = Union[dict, list, tuple, set]

_dispatch = Dispatch("conversion")

_TARGETS = {"np": None, "torch": "fe_torch", "tf": "fe_tf"}


def map_leaves(data: Any, function: Callable[[Any], Any]) -> Any:
    """Apply `function` to every non-collection value of `data`, keeping dicts, lists, tuples and sets."""
    if isinstance(data, dict):
        if type(data) is dict:  # pylint: disable=unidiomatic-typecheck
            return {key: map_leaves(value, function) for key, value in data.items()}
        mapped = copy.copy(data)  # a dict subclass (Data, OrderedDict, ...) keeps its type
        for key, value in data.items():
            mapped[key] = map_leaves(value, function)
        return mapped
    if isinstance(data, list):
        return [map_leaves(value, function) for value in data]
    if isinstance(data, tuple):
        values = [map_leaves(value, function) for value in data]
        return type(data)(*values) if hasattr(data, "_fields") else tuple(values)  # namedtuples keep their type
    if isinstance(data, set):
        return {map_leaves(value, function) for value in data}
    return function(data)


def dtype_name(dtype: Any) -> str:
    """The numpy-style name of a dtype given as a string, a numpy/torch/tf dtype, or a tensor having one.

    Example:
        >>> dtype_name("float16"), dtype_name(np.ones(2, dtype="int8"))
        ('float16', 'int8')
    """
    if isinstance(dtype, str):
        return np.dtype(dtype).name if dtype not in ("bfloat16",) else dtype
    dtype = getattr(dtype, "dtype", dtype)
    name = getattr(dtype, "name", None)
    if isinstance(name, str):  # numpy and TensorFlow dtypes
        return name
    return str(dtype).rpartition(".")[2]  # torch.float32 -> 'float32'


@fe_export("fe.backend.to_tensor", "fe.backend._to_tensor.to_tensor")
def to_tensor(data: Any, target_type: str, shared_memory: bool = False) -> Any:
    """Convert tensors within a collection of `data` to a given `target_type` recursively.

    numpy arrays, numbers and tensors of any framework become `target_type` tensors (torch tensors on the CPU, as
    FastEstimator's pipeline produces them); None stays None, strings stay strings. Asking for 'torch' or 'tf'
    tensors loads that framework's backend (fe-torch / fe-tf) if it is not loaded yet.

    Args:
        data: A tensor or possibly nested collection of tensors.
        target_type: What kind of tensor(s) to create, one of "tf", "torch", or "np".
        shared_memory: Whether to put the tensor(s) in shared memory (only applicable when `target_type` is 'torch').

    Returns:
        A collection with the same structure as `data`, but with any tensors converted to the `target_type`.

    Raises:
        ValueError: If `target_type` is not one of 'np', 'torch', 'tf'.

    Example:
        >>> to_tensor({"x": [1.5, np.ones(2)]}, target_type="np")
        {'x': [array(1.5), array([1., 1.])]}
    """
    if target_type not in _TARGETS:
        raise ValueError(f"fe.backend.to_tensor: target_type must be one of {sorted(_TARGETS)}, got {target_type!r}")
    package = _TARGETS[target_type]
    if package is None:
        return map_leaves(data, _to_numpy)
    backend = backend_module(package, "conversion")  # the user asks for this framework's tensors
    return map_leaves(data, lambda value: backend.to_tensor(value, shared_memory))


def _to_numpy(value: Any) -> Any:
    if value is None or isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, (int, float, bool, complex, np.generic)):
        return np.array(value)
    backend = _dispatch(value, "to_tensor")
    return np.asarray(value) if backend is None else backend.to_numpy(value)


@fe_export("fe.backend.cast", "fe.backend._cast.cast")
def cast(data: Any, dtype: Union[str, Any]) -> Any:
    """Cast the data to a specific data type recursively.

    Args:
        data: A tensor or possibly nested collection of tensors.
        dtype: Target reference data type, one of: uint8, int8, int16, int32, int64, float16, float32, float64 (also
            bool, bfloat16 where the framework has it); or a tensor whose dtype is taken.

    Returns:
        A collection with the same structure as `data` with reference data type. Numbers become numpy scalars; None
        and strings are left as they are.

    Raises:
        ValueError: If a value in `data` is of an unacceptable type.

    Example:
        >>> to_type(cast({"x": np.ones((2, 2)), "y": [np.ones(4)]}, "float16"))
        {'x': dtype('float16'), 'y': [dtype('float16')]}
    """
    name = dtype_name(dtype)
    return map_leaves(data, lambda value: _cast_leaf(value, name))


def _cast_leaf(value: Any, name: str) -> Any:
    if value is None or isinstance(value, (str, bytes)):
        return value
    backend = _dispatch(value, "cast")
    if backend is None:
        if isinstance(value, np.ndarray):
            return value.astype(name, copy=False)
        return np.dtype(name).type(value)
    return backend.cast(value, name)


@fe_export("fe.backend.to_type", "fe.backend._to_type.to_type")
def to_type(data: Any) -> Any:
    """Compute the data types of tensors within a collection of `data` recursively.

    Args:
        data: A tensor or possibly nested collection of tensors.

    Returns:
        A collection with the same structure as `data`, but with any tensors substituted for their dtypes (numpy
        dtypes, torch dtypes or tf DTypes).

    Example:
        >>> to_type({"x": np.ones((10, 15), dtype="float32"), "y": [np.ones(4, dtype="int8")]})
        {'x': dtype('float32'), 'y': [dtype('int8')]}
    """
    return map_leaves(data, lambda value: value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype)


@fe_export("fe.backend.to_shape", "fe.backend._to_shape.to_shape")
def to_shape(data: Any, add_batch: bool = False, exact_shape: bool = True) -> Any:
    """Compute the shape of tensors within a collection of `data` recursively.

    Args:
        data: A tensor or possibly nested collection of tensors.
        add_batch: Whether to prepend a batch dimension (None) to the shapes.
        exact_shape: Whether to return the exact shapes, or if False to fill the shapes with None values.

    Returns:
        A collection with the same structure as `data`, but with any tensors substituted for their shapes (tuples;
        None for dimensions a traced TensorFlow tensor does not know).

    Example:
        >>> to_shape({"x": np.ones((10, 15)), "y": [np.ones(4)]}, add_batch=True)
        {'x': (None, 10, 15), 'y': [(None, 4)]}
    """
    def shape_of(value: Any) -> Any:
        dims = value.shape if hasattr(value, "shape") else np.shape(value)
        shape = tuple(None if size is None else int(size) for size in dims)
        if not exact_shape:
            shape = (None,) * len(shape)
        return (None,) + shape if add_batch else shape
    return map_leaves(data, shape_of)


@fe_export("fe.backend.convert_tensor_precision", "fe.backend._convert_tensor_precision.convert_tensor_precision")
def convert_tensor_precision(tensor: Tensor) -> Tensor:
    """Adjust the input data precision based on the environment's precision.

    numpy arrays and torch tensors become float32 (torch mixed precision is autocast's job); TensorFlow tensors take
    the compute dtype of Keras' global dtype policy (float16 under 'mixed_float16', float32 otherwise).

    Args:
        tensor: The input value.

    Returns:
        The precision adjusted data (16 bit for mixed precision, 32 bit otherwise).

    Raises:
        ValueError: If `tensor` is an unacceptable data type.

    Example:
        >>> convert_tensor_precision(np.ones(2, dtype="float64")).dtype
        dtype('float32')
    """
    backend = _dispatch(tensor, "convert_tensor_precision")
    if backend is None:
        return np.asarray(tensor).astype(np.float32)
    return backend.convert_tensor_precision(tensor)

