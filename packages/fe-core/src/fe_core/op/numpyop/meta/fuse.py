"""`Fuse`: run a sequence of NumpyOps as a single op."""
from __future__ import annotations

from typing import Any, Dict, List, Union

from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.meta.nested_state import MetaOpStateMixin
from fe_core.op.numpyop.forward_numpyop import forward_numpyop
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Fuse"]


@fe_export("fe.op.numpyop.meta.fuse.Fuse", "fe.op.numpyop.meta.Fuse")
class Fuse(MetaOpStateMixin, NumpyOp):
    """Run a sequence of NumpyOps as one op (e.g. to wrap a whole chain in `Sometimes` or `OneOf`).

    The Fuse reads every key some op reads before an earlier op of the chain writes it, and writes every key the
    chain writes (a `Delete` inside the chain removes keys from what the Fuse writes). It is batch-capable when all its
    ops are. The states of its ops are saved in checkpoints with the Fuse.

    Args:
        ops: The NumpyOps to run, in order. They must share their mode and ds_id, and cannot be scheduled (the Fuse
            itself may be).

    Raises:
        ValueError: If `ops` is empty, holds something other than a NumpyOp (a Scheduler, a Batch), or its ops differ
            in mode or ds_id.

    Example:
        >>> from fe_core.op.numpyop.lambda_op import LambdaOp
        >>> fused = Fuse([LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y"),
        ...               LambdaOp(fn=lambda y: y * 10, inputs="y", outputs="z")])
        >>> fused.inputs, fused.outputs, fused.forward([1], {})
        (['x'], ['y', 'z'], [2, 20])
    """

    def __init__(self, ops: Union[NumpyOp, List[NumpyOp]]) -> None:
        ops = to_list(ops)
        if not ops:
            raise ValueError("Fuse needs at least one op")
        for op in ops:
            if isinstance(op, Batch) or not isinstance(op, NumpyOp):
                raise ValueError(f"Fuse can only hold NumpyOps other than Batch (no Schedulers: schedule the Fuse "
                                 f"instead), got {type(op).__name__}")
        first = ops[0]
        for op in ops[1:]:
            if op.mode != first.mode or op.ds_id != first.ds_id:
                raise ValueError(f"All ops in a Fuse must share mode and ds_id: {first!r} runs in mode "
                                 f"{sorted(first.mode) or 'all'} / ds_id {sorted(first.ds_id) or 'all'}, {op!r} in "
                                 f"{sorted(op.mode) or 'all'} / {sorted(op.ds_id) or 'all'}")
        inputs: List[str] = []
        outputs: List[str] = []
        for op in ops:
            if isinstance(op, Delete):
                outputs = [key for key in outputs if key not in op.inputs]
                continue
            inputs += [key for key in op.inputs if key not in inputs and key not in outputs]
            outputs += [key for key in op.outputs if key not in outputs]
        super().__init__(inputs=inputs, outputs=outputs, mode=first.mode, ds_id=first.ds_id)
        self.in_list, self.out_list = True, True
        self.ops = ops
        self.batch_capable = all(getattr(op, "batch_capable", False) for op in ops)

    def get_child_ops(self) -> List[NumpyOp]:
        """The fused ops, in order."""
        return list(self.ops)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set every fused op's augmentation intensity (called by the RUA op).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).

        Raises:
            AttributeError: If an op has no `set_rua_level` method.
        """
        self._set_children_rua_level(magnitude_coef)

    def _run(self, data: List[Any], state: Dict[str, Any], batched: bool) -> Union[FilteredData, List[Any]]:
        store = dict(zip(self.inputs, data))
        filtered = forward_numpyop(self.ops, store, state, batched="np" if batched else None)
        if filtered is not None:
            return filtered
        return [store[key] for key in self.outputs]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the ops, in order, on one sample."""
        return self._run(data, state, batched=False)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the ops, in order, on a batch."""
        return self._run(data, state, batched=True)

    def __repr__(self) -> str:
        return f"Fuse({self.ops!r})"
