"""`OneOf`: run one NumpyOp chosen at random from several."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.meta.nested_state import MetaOpStateMixin
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import ungroup_outputs

__all__ = ["OneOf"]


@fe_export("fe.op.numpyop.meta.one_of.OneOf", "fe.op.numpyop.meta.OneOf")
class OneOf(MetaOpStateMixin, NumpyOp):
    """Run one of `numpy_ops`, chosen with numpy's global random state, on each sample (or batch).

    The choice is made per call: per sample before `Batch`, per batch after it (and as network postprocessing). The
    state of every candidate op is saved in checkpoints with the OneOf.

    Args:
        *numpy_ops: The candidate ops; they must share inputs, outputs, mode and ds_id.
        probs: The probability of choosing each op (one per op, summing to 1); None chooses uniformly.

    Raises:
        ValueError: If no op is given, an op is a Batch, the ops differ in inputs, outputs, mode or ds_id, or `probs`
            does not have one non-negative entry per op summing to 1.

    Example:
        >>> from fe_core.op.numpyop.lambda_op import LambdaOp
        >>> negate = LambdaOp(fn=lambda x: -x, inputs="x", outputs="x")
        >>> double = LambdaOp(fn=lambda x: 2 * x, inputs="x", outputs="x")
        >>> OneOf(negate, double, probs=[0.0, 1.0]).forward([3], {})
        6
    """

    def __init__(self, *numpy_ops: NumpyOp, probs: Optional[List[float]] = None) -> None:
        if not numpy_ops:
            raise ValueError("OneOf needs at least one op")
        first = numpy_ops[0]
        for op in numpy_ops:
            if isinstance(op, Batch):
                raise ValueError("OneOf cannot hold a Batch op")
            if not isinstance(op, NumpyOp):
                raise ValueError(f"OneOf needs NumpyOps, got {type(op).__name__}")
            if (op.inputs, op.outputs, op.mode, op.ds_id) != (first.inputs, first.outputs, first.mode, first.ds_id):
                raise ValueError(f"All ops in a OneOf must share inputs, outputs, mode and ds_id: {first!r} and {op!r} "
                                 f"differ")
        super().__init__(inputs=list(first.inputs), outputs=list(first.outputs), mode=first.mode, ds_id=first.ds_id)
        self.in_list, self.out_list = first.in_list, first.out_list
        self.ops = list(numpy_ops)
        if probs is not None:
            probs = [float(p) for p in probs]
            if len(probs) != len(self.ops) or any(p < 0 for p in probs) or not np.isclose(sum(probs), 1.0):
                raise ValueError(f"OneOf probs must hold one non-negative probability per op ({len(self.ops)}) summing "
                                 f"to 1, got {probs}")
            self._cumulative = np.cumsum(probs)
            self._cumulative[-1] = 1.0
        self.probs = probs

    def get_child_ops(self) -> List[NumpyOp]:
        """The candidate ops."""
        return list(self.ops)

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set every candidate op's augmentation intensity (called by the RUA op).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).

        Raises:
            AttributeError: If an op has no `set_rua_level` method.
        """
        self._set_children_rua_level(magnitude_coef)

    def _choose(self) -> NumpyOp:
        if self.probs is None:
            return self.ops[np.random.randint(len(self.ops))]
        return self.ops[int(np.searchsorted(self._cumulative, np.random.uniform(), side="right"))]

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        """Run a randomly chosen op on one sample."""
        chosen = self._choose()
        return ungroup_outputs(chosen, chosen.forward(data, state))

    def forward_batch(self, data: Any, state: Dict[str, Any]) -> Any:
        """Run a randomly chosen op on a whole batch."""
        chosen = self._choose()
        return ungroup_outputs(chosen, chosen.forward_batch(data, state))

    def __repr__(self) -> str:
        return f"OneOf({', '.join(repr(op) for op in self.ops)}, probs={self.probs})"
