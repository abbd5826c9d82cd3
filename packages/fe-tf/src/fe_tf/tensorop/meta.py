"""TensorFlow kernels of fe-core's meta TensorOps: `tf.cond` (Sometimes), `tf.switch_case` (OneOf) and
`tf.while_loop` (function-controlled Repeat) inside the traced step, drawing from the global `tf.random.Generator`."""
from __future__ import annotations

from typing import Any, Dict, List

import tensorflow as tf

from fe_tf.tensorop.augmentation import global_generator, prepare_generator

__all__ = ["KERNELS"]


def _tensors(values: List[Any]) -> List[Any]:
    return [tf.convert_to_tensor(value) for value in values]


def sometimes_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Run the wrapped op with probability `op.prob` (`tf.cond`; both branches give the same keys)."""
    draw = global_generator().uniform([])
    return tf.cond(draw < op.prob, lambda: _tensors(op.run(data, state)), lambda: _tensors(op.skip(data)))


def one_of_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Run one wrapped op, picked by `op.probs` (`tf.switch_case`)."""
    draw = global_generator().uniform([1])
    index = tf.searchsorted(tf.constant(op.cumulative, tf.float32), draw, side="right")[0]
    branches = [lambda index=position: _tensors(op.run(index, data, state)) for position in range(len(op.ops))]
    return tf.switch_case(tf.cast(index, tf.int32), branches)


def repeat_kernel(op: Any, store: Dict[str, Any], state: Dict[str, Any]) -> List[Any]:
    """Run the op once, then in a `tf.while_loop` while `op.repeat(...)` is true (at most `op.max_iter` runs)."""
    op.step(store, state)
    keys = list(store)
    values = tuple(_tensors([store[key] for key in keys]))

    def condition(count: tf.Tensor, *loop_values: Any) -> tf.Tensor:
        keep_going = tf.reduce_all(tf.cast(op.should_continue(dict(zip(keys, loop_values))), tf.bool))
        if op.max_iter is not None:
            keep_going = tf.logical_and(keep_going, count < op.max_iter)
        return keep_going

    def body(count: tf.Tensor, *loop_values: Any) -> tuple:
        loop_store = dict(zip(keys, loop_values))
        op.step(loop_store, state)
        return (count + 1, ) + tuple(_tensors([loop_store[key] for key in keys]))

    result = tf.while_loop(condition, body, (tf.constant(1), ) + values)
    final = dict(zip(keys, result[1:]))
    return [final[key] for key in op.outputs]


sometimes_kernel.fe_prepare = prepare_generator  # type: ignore[attr-defined]
one_of_kernel.fe_prepare = prepare_generator  # type: ignore[attr-defined]

KERNELS = {"sometimes": sometimes_kernel, "one_of": one_of_kernel, "repeat": repeat_kernel}
