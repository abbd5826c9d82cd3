"""Walking (nested) collections of tensors: `move_tensors_to_device` and `detach_tensors`.

Dicts, lists, tuples and sets are rebuilt with each torch or TensorFlow tensor replaced (by the fe_torch / fe_tf half
of these functions); everything else is returned as it is.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar, Union

from fe_core.export import fe_export
from fe_core.util._framework_util import util_module_for

__all__ = ["move_tensors_to_device", "detach_tensors"]

T = TypeVar("T")


def _map_tensors(data: Any, function: str, *args: Any) -> Any:
    if isinstance(data, dict):
        return {key: _map_tensors(value, function, *args) for key, value in data.items()}
    if isinstance(data, list):
        return [_map_tensors(value, function, *args) for value in data]
    if isinstance(data, tuple):
        mapped = [_map_tensors(value, function, *args) for value in data]
        return type(data)(*mapped) if hasattr(data, "_fields") else tuple(mapped)  # namedtuples keep their type
    if isinstance(data, set):
        return {_map_tensors(value, function, *args) for value in data}
    backend = util_module_for(data, "tensors")
    if backend is None:
        return data
    converter: Callable[..., Any] = getattr(backend, function)
    return converter(data, *args)


@fe_export("fe.util.util.move_tensors_to_device", "fe.util.move_tensors_to_device")
def move_tensors_to_device(data: T, device: Union[str, Any]) -> T:
    """Move torch tensors (or TensorFlow tensors) inside (nested) collections to `device`, e.g. between GPU and CPU.

    Example:
        >>> batch = {"x": torch.ones(2), "meta": ["id", torch.zeros(1)]}  # doctest: +SKIP
        >>> move_tensors_to_device(batch, "cuda:0")["x"].device  # doctest: +SKIP
        device(type='cuda', index=0)

    Args:
        data: The input data to be moved.
        device: The target device ('cpu', 'cuda:0', a torch.device; for TensorFlow a device string like '/GPU:0').

    Returns:
        The same structure with its tensors on `device`.
    """
    return _map_tensors(data, "move_to_device", device)


@fe_export("fe.util.util.detach_tensors", "fe.util.detach_tensors")
def detach_tensors(data: T) -> T:
    """Detach tensors inside (nested) collections from the current gradient graph.

    Torch tensors are `.detach()`ed; TensorFlow tensors go through `tf.stop_gradient`.

    Args:
        data: The data to be detached.

    Returns:
        The same structure with detached tensors.
    """
    return _map_tensors(data, "detach")
