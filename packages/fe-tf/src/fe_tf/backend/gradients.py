"""TensorFlow gradients behind `fe_core.backend.gradients` (a `tf.GradientTape` is required)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import tensorflow as tf

__all__ = ["watch", "get_gradient"]


def _require_tape(tape: Any, function: str) -> tf.GradientTape:
    if tape is None:
        raise ValueError(f"fe.backend.{function} needs the tf.GradientTape recording the computation (tape=...) for "
                         "TensorFlow tensors")
    return tape


def watch(tensor: Any, tape: Optional[tf.GradientTape] = None) -> Any:
    """The TensorFlow case of `fe.backend.watch`."""
    _require_tape(tape, "watch").watch(tensor)
    return tensor


def get_gradient(target: Any, sources: Union[Any, Sequence[Any]], higher_order: bool, tape: Any,
                 retain_graph: bool) -> Union[Optional[tf.Tensor], List[Optional[tf.Tensor]]]:
    """The TensorFlow case of `fe.backend.get_gradient`."""
    tape = _require_tape(tape, "get_gradient")
    if higher_order or not getattr(tape, "_recording", False):
        return tape.gradient(target, sources)
    with tape.stop_recording():
        return tape.gradient(target, sources)
