"""Looking at data of any framework: its type (`get_type`), shape (`get_shape`), batch size (`get_batch_size`), and
its value as numpy (`to_number`)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from fe_core.export import fe_export
from fe_core.util._framework_util import util_module_for
from fe_core.util.strings import strip_prefix, strip_suffix

__all__ = ["get_type", "get_shape", "get_batch_size", "to_number"]


def _type_name(obj: Any) -> str:
    return strip_suffix(strip_prefix(str(type(obj)), "<class '"), "'>")


@fe_export("fe.util.base_util.get_type", "fe.util.get_type")
def get_type(obj: Any) -> str:
    """Infer the type of data, looking into lists and tuples (through their first element).

    Anything with a `dtype` reports it as its framework prints it ('int32' for numpy, "<dtype: 'float16'>" for
    TensorFlow, 'torch.float32' for torch).

    Example:
        >>> get_type(np.ones((10, 10), dtype="int32")), get_type([np.ones((10, 10)) for i in range(4)])
        ('int32', 'List[float64]')
        >>> get_type(27), get_type({"a": 1}), get_type([1, "a"]), get_type([[[1]]])
        ('int', 'dict', 'List[int]', 'List[List[List[int]]]')

    Args:
        obj: Data which may be wrapped in some kind of container.

    Returns:
        A string representation of the data type of the `obj`.
    """
    if hasattr(obj, "dtype"):
        return str(obj.dtype)
    if isinstance(obj, (list, tuple)) and len(obj) > 0:
        return f"List[{get_type(obj[0])}]"
    return _type_name(obj)


@fe_export("fe.util.base_util.get_shape", "fe.util.get_shape")
def get_shape(obj: Any) -> List[Optional[int]]:
    """Find the shape of an object or of a sequence of objects.

    Lists and tuples get a ragged (None) leading dimension. When their entries have different ranks only that
    dimension is reported; otherwise each inner dimension is kept where all entries agree and None where they differ.
    Objects without a shape (python numbers, dicts, strings) have the shape [].

    Example:
        >>> get_shape(np.ones((12, 22, 11))), get_shape([np.ones((12, 22, 11)), np.ones((18, 5))])
        ([12, 22, 11], [None])
        >>> get_shape([np.ones((12, 22, 11)), np.ones((12, 22, 4))]), get_shape({"a": np.ones((12, 22, 11))})
        ([None, 12, 22, None], [])

    Args:
        obj: Data to infer the shape of.

    Returns:
        A list representing the shape of the data.
    """
    shape = getattr(obj, "shape", None)
    if shape is not None and not isinstance(obj, type):
        return [None if dim is None else int(dim) for dim in shape]
    if isinstance(obj, (list, tuple)):
        shapes = [get_shape(entry) for entry in obj]
        result: List[Optional[int]] = [None]
        if not shapes or len({len(entry) for entry in shapes}) > 1:
            return result
        inner = list(shapes[0])
        for entry in shapes[1:]:
            inner = [dim if dim == other else None for dim, other in zip(inner, entry)]
        return result + inner
    return []


@fe_export("fe.util.util.get_batch_size", "fe.util.get_batch_size")
def get_batch_size(data: Dict[str, Any]) -> int:
    """Infer the batch size from a batch dictionary: the leading dimension its arrays/tensors share.

    Values without a `shape` (or with an empty one: scalars) are ignored.

    Example:
        >>> get_batch_size({"x": np.ones((4, 28, 28)), "y": np.ones(4), "name": "mnist"})
        4

    Args:
        data: The batch dictionary.

    Returns:
        The batch size.

    Raises:
        AssertionError: If `data` is not a dict, or its values disagree on (or have no) batch dimension.
    """
    if not isinstance(data, dict):
        raise AssertionError(f"get_batch_size: expected a batch dictionary, got {type(data).__name__}")
    sizes = {key: value.shape[0] for key, value in data.items()
             if hasattr(value, "shape") and len(value.shape) > 0}
    distinct = set(sizes.values())
    if len(distinct) != 1:
        raise AssertionError(f"get_batch_size: invalid batch size {distinct or '{}'}: the leading dimensions of "
                             f"the batch's arrays are {sizes}")
    size = distinct.pop()
    return size if size is None else int(size)


@fe_export("fe.util.util.to_number", "fe.util.to_number")
def to_number(data: Any) -> np.ndarray:
    """Convert a value (a tf or torch tensor, a numpy array, a python number or string) into a numpy ndarray.

    Torch tensors are detached and moved to the CPU first; low-precision floats numpy lacks (bfloat16) become
    float32.

    Example:
        >>> to_number(5), to_number(4.0), to_number(np.array([1, 2, 3]))
        (array(5), array(4.), array([1, 2, 3]))
        >>> import torch  # doctest: +SKIP
        >>> to_number(torch.tensor([1, 2, 3], requires_grad=False))  # doctest: +SKIP
        array([1, 2, 3])

    Args:
        data: The value to be converted into a np.ndarray.

    Returns:
        An ndarray corresponding to the given `data`.
    """
    if isinstance(data, np.ndarray):
        return data
    backend = util_module_for(data, "tensors")
    if backend is not None:
        return backend.to_number(data)
    return np.array(data)
