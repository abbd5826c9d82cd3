"""Gradients: `watch` a tensor and `get_gradient` of a target with respect to sources (torch and TensorFlow).

numpy arrays carry no gradients, so both functions raise ValueError for them.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, TypeVar, Union

from fe_core.backend.dispatch import Dispatch
from fe_core.export import fe_export

__all__ = ["watch", "get_gradient"]

Tensor = TypeVar("Tensor")

_dispatch = Dispatch("gradients")


def _framework_backend(value: Any, function: str) -> Any:
    backend = _dispatch(value, function)
    if backend is None:
        raise ValueError(f"fe.backend.{function} needs a torch or TensorFlow tensor (numpy values carry no "
                         f"gradients), got {type(value).__name__}")
    return backend


@fe_export("fe.backend.watch", "fe.backend._watch.watch")
def watch(tensor: Tensor, tape: Optional[Any] = None) -> Tensor:
    """Monitor the given `tensor` for later gradient computations.

    Args:
        tensor: The tensor to be monitored.
        tape: A TensorFlow GradientTape which will be used to record gradients (iff using TensorFlow for the backend).

    Returns:
        The `tensor` being tracked for gradient computations. On torch it is the same tensor with
        `requires_grad=True` (a tensor that already requires gradients is returned as it is).

    Raises:
        ValueError: If `tensor` is an unacceptable data type, or a TensorFlow tensor comes without a `tape`.

    Example:
        >>> # x = fe.backend.watch(torch.ones((3, 1, 28, 28)))  # x.requires_grad == True
    """
    return _framework_backend(tensor, "watch").watch(tensor, tape)


@fe_export("fe.backend.get_gradient", "fe.backend._get_gradient.get_gradient")
def get_gradient(target: Tensor,
                 sources: Union[Iterable[Tensor], Tensor],
                 higher_order: bool = False,
                 tape: Optional[Any] = None,
                 retain_graph: bool = True) -> Union[Iterable[Tensor], Tensor]:
    """Calculate gradients of a target w.r.t sources.

    A non-scalar target is differentiated as the sum of its elements (the gradient of each element, added up).

    Args:
        target: The target (final) tensor.
        sources: A sequence of source (initial) tensors, or a single one.
        higher_order: Whether the gradient will be used for higher order gradients (the result itself is then
            differentiable: torch builds its graph; TensorFlow keeps recording on `tape`).
        tape: TensorFlow gradient tape. Only needed when using the TensorFlow backend.
        retain_graph: Whether to retain PyTorch graph. Only valid when using the PyTorch backend.

    Returns:
        Gradient(s) of the `target` with respect to the `sources`: one tensor for a single source, else a list (None
        for a source the target does not depend on).

    Raises:
        ValueError: If `target` is an unacceptable data type, or a TensorFlow target comes without a `tape`.

    Example:
        >>> # x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> # fe.backend.get_gradient(target=x * x, sources=x)  # tensor([2., 4., 6.])
    """
    return _framework_backend(target, "get_gradient").get_gradient(target, sources, higher_order, tape, retain_graph)
