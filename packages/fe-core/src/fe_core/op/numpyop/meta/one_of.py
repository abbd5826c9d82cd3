"""`OneOf`: run one NumpyOp chosen at random from several."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.export import fe_export

__all__ = ["OneOf"]


@fe_export("fe.op.numpyop.meta.one_of.OneOf", "fe.op.numpyop.meta.OneOf")
class OneOf(NumpyOp):
    """Run one of `numpy_ops`, chosen uniformly with numpy's global random state, on each sample (or batch).

    Args:
        *numpy_ops: The candidate ops; they must share inputs, outputs, mode and ds_id.

    Raises:
        ValueError: If no op is given, an op is a Batch, or the ops differ in inputs, outputs, mode or ds_id.

    Example:
        >>> # OneOf(LambdaOp(fn=np.fliplr, inputs="x", outputs="x"), LambdaOp(fn=np.flipud, inputs="x", outputs="x"))
    """

    def __init__(self, *numpy_ops: NumpyOp) -> None:
        if not numpy_ops:
            raise ValueError("OneOf needs at least one op")
        first = numpy_ops[0]
        for op in numpy_ops:
            if isinstance(op, Batch):
                raise ValueError("OneOf cannot hold a Batch op")
            if (op.inputs, op.outputs, op.mode, op.ds_id) != (first.inputs, first.outputs, first.mode, first.ds_id):
                raise ValueError(f"All ops in a OneOf must share inputs, outputs, mode and ds_id: {first!r} and {op!r} "
                                 f"differ")
        super().__init__(inputs=list(first.inputs), outputs=list(first.outputs), mode=first.mode, ds_id=first.ds_id)
        self.in_list, self.out_list = first.in_list, first.out_list
        self.ops = list(numpy_ops)

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return self.ops[np.random.randint(len(self.ops))].forward(data, state)

    def forward_batch(self, data: Any, state: Dict[str, Any]) -> Any:
        return self.ops[np.random.randint(len(self.ops))].forward_batch(data, state)

    def __repr__(self) -> str:
        return f"OneOf({', '.join(repr(op) for op in self.ops)})"
