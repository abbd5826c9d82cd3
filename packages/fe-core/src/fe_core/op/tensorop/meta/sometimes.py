"""`Sometimes` and `OneOf`: run a TensorOp with some probability, or one of several, inside the step."""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional

from fe_core.export import fe_export
from fe_core.op.tensorop.meta.wrapper import WrapperOp, run_wrapped
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["Sometimes", "OneOf"]


def _io_keys(op: TensorOp) -> List[str]:
    """The op's inputs followed by its outputs that are not inputs (their current values pass through on a skip)."""
    return list(op.inputs) + [key for key in op.outputs if key not in op.inputs]


@fe_export("fe.op.tensorop.meta.sometimes.Sometimes", "fe.op.tensorop.meta.Sometimes")
class Sometimes(WrapperOp):
    """Run a TensorOp with probability `prob`; otherwise its output keys keep their current values.

    The coin is tossed inside the step with the framework's seeded generator (torch's global CPU generator; on
    TensorFlow the global `tf.random.Generator` inside the traced step, with `tf.cond`), so runs repeat under
    `enable_deterministic` and resume exactly. The op's output keys must already exist (create defaults with a
    LambdaOp first).

    Args:
        tensor_op: The op to run sometimes.
        prob: The probability of running it, in [0, 1].

    Raises:
        ValueError: If `prob` is outside [0, 1] or `tensor_op` is not a TensorOp.
    """

    kernel_name = "sometimes"

    def __init__(self, tensor_op: TensorOp, prob: float = 0.5) -> None:
        self.ops = self.check_ops([tensor_op], "Sometimes")
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Sometimes prob must be in [0, 1], got {prob}")
        super().__init__(inputs=_io_keys(tensor_op), outputs=tensor_op.outputs, mode=tensor_op.mode,
                         ds_id=tensor_op.ds_id)
        self.mode, self.ds_id = tensor_op.mode, tensor_op.ds_id
        self.op = tensor_op
        self.prob = float(prob)
        self.in_list, self.out_list = True, True

    def run(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Run the wrapped op on `data` (this op's inputs) and return its outputs."""
        store = dict(zip(self.inputs, data))
        run_wrapped(self.op, store, state)
        return [store[key] for key in self.outputs]

    def skip(self, data: List[Any]) -> List[Any]:
        """The outputs' current values (what the op's outputs are when it does not run)."""
        store = dict(zip(self.inputs, data))
        return [store[key] for key in self.outputs]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        if self.prob >= 1.0:
            return self.run(data, state)
        if self.prob <= 0.0:
            return self.skip(data)
        self.ensure_built(data)
        return self._kernel(self, data, state)


@fe_export("fe.op.tensorop.meta.one_of.OneOf", "fe.op.tensorop.meta.OneOf")
class OneOf(WrapperOp):
    """Run one of several TensorOps, picked at random in every step (uniformly, or with `probs`).

    The ops must read and write the same keys and run in the same modes. The pick is drawn inside the step with the
    framework's seeded generator (torch's global CPU generator; TensorFlow's global `tf.random.Generator` and
    `tf.switch_case` inside the traced step). Like the ops it wraps, a OneOf takes and returns a single value for a
    single (string) key, and lists for lists of keys.

    Args:
        *tensor_ops: The ops to choose from.
        probs: Their probabilities (summing to 1); None for equal chances.

    Raises:
        ValueError: If the ops differ in inputs/outputs/modes, or `probs` is invalid.
    """

    kernel_name = "one_of"

    def __init__(self, *tensor_ops: TensorOp, probs: Optional[List[float]] = None) -> None:
        self.ops = self.check_ops(tensor_ops, "OneOf")
        first = self.ops[0]
        for op in self.ops[1:]:
            if op.inputs != first.inputs or op.outputs != first.outputs or op.mode != first.mode \
                    or op.ds_id != first.ds_id:
                raise ValueError("OneOf ops must share inputs, outputs, mode and ds_id; "
                                 f"{type(first).__name__} has {first.inputs} -> {first.outputs} ({first.mode}), "
                                 f"{type(op).__name__} has {op.inputs} -> {op.outputs} ({op.mode})")
        if probs is None:
            probs = [1.0 / len(self.ops)] * len(self.ops)
        if len(probs) != len(self.ops) or any(p < 0 for p in probs) or abs(sum(probs) - 1.0) > 1e-6:
            raise ValueError(f"OneOf probs must be {len(self.ops)} non-negative numbers summing to 1, got {probs}")
        super().__init__(inputs=first.inputs, outputs=first.outputs, mode=first.mode, ds_id=first.ds_id)
        self.mode, self.ds_id = first.mode, first.ds_id
        self.probs = [float(p) for p in probs]
        self.cumulative = list(itertools.accumulate(self.probs))[:-1]  # upper bounds of all but the last op's slot
        # what the wrapped ops take and return: one value for a single (string) key, else a list
        self.in_list = first.in_list or len(first.inputs) != 1
        self.out_list = first.out_list or len(first.outputs) != 1

    def run(self, index: int, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        """Run op number `index` on `data` (this op's inputs, as a list) and return the outputs as a list."""
        store: Dict[str, Any] = dict(zip(self.inputs, data))
        run_wrapped(self.ops[index], store, state)
        return [store[key] for key in self.outputs]

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        values = data if self.in_list else [data]
        if len(self.ops) == 1:
            result = self.run(0, values, state)
        else:
            self.ensure_built(values)
            result = self._kernel(self, values, state)
        return result if self.out_list else result[0]
