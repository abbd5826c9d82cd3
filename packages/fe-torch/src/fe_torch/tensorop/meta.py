"""Torch kernels of fe-core's meta TensorOps (Sometimes, OneOf, function-controlled Repeat): the random draws come
from torch's global CPU generator (seeded by `enable_deterministic`, saved in checkpoints)."""
from __future__ import annotations

import bisect
from typing import Any, Dict, List

import torch

__all__ = ["KERNELS"]


def sometimes_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Run the wrapped op with probability `op.prob`."""
    if float(torch.rand(())) < op.prob:
        return op.run(data, state)
    return op.skip(data)


def one_of_kernel(op: Any, data: List[Any], state: Dict[str, Any]) -> List[Any]:
    """Run one wrapped op, picked by `op.probs`."""
    return op.run(bisect.bisect_right(op.cumulative, float(torch.rand(()))), data, state)


def repeat_kernel(op: Any, store: Dict[str, Any], state: Dict[str, Any]) -> List[Any]:
    """Run the op, then again while `op.repeat(...)` is true (at most `op.max_iter` runs)."""
    op.step(store, state)
    count = 1
    while (op.max_iter is None or count < op.max_iter) and bool(op.should_continue(store)):
        op.step(store, state)
        count += 1
    return [store[key] for key in op.outputs]


KERNELS = {"sometimes": sometimes_kernel, "one_of": one_of_kernel, "repeat": repeat_kernel}
