"""`Sometimes`: run a NumpyOp with a given probability."""
from __future__ import annotations

from typing import Any, Dict, List, Union

import numpy as np

from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.export import fe_export

__all__ = ["Sometimes"]


@fe_export("fe.op.numpyop.meta.sometimes.Sometimes", "fe.op.numpyop.meta.Sometimes")
class Sometimes(NumpyOp):
    """Run `numpy_op` with probability `prob` (drawn from numpy's global random state); otherwise pass data through.

    When the op is skipped, each output key keeps its current value, so every output key must already exist (create
    a default with a LambdaOp first if needed).

    Args:
        numpy_op: The op to run sometimes.
        prob: Probability of running it, in [0, 1].

    Raises:
        ValueError: If `numpy_op` is a Batch or `prob` is out of range.

    Example:
        >>> # Sometimes(LambdaOp(fn=np.fliplr, inputs="x", outputs="x"), prob=0.5)
    """

    def __init__(self, numpy_op: NumpyOp, prob: float = 0.5) -> None:
        if isinstance(numpy_op, Batch):
            raise ValueError("Sometimes cannot wrap a Batch op")
        if not 0 <= prob <= 1:
            raise ValueError(f"Sometimes prob must be in [0, 1], got {prob!r}")
        extra_inputs = [key for key in numpy_op.outputs if key not in numpy_op.inputs]
        super().__init__(inputs=list(numpy_op.inputs) + extra_inputs, outputs=list(numpy_op.outputs),
                         mode=numpy_op.mode, ds_id=numpy_op.ds_id)
        self.op = numpy_op
        self.prob = prob
        self._op_inputs = len(numpy_op.inputs)
        self._passthrough = [self.inputs.index(key) for key in self.outputs]

    def _run(self, data: List[Any], state: Dict[str, Any], batched: bool) -> Union[FilteredData, List[Any]]:
        if self.prob > np.random.uniform():
            op_data: Any = data[:self._op_inputs]
            if not self.op.in_list:
                op_data = op_data[0]
            result = self.op.forward_batch(op_data, state) if batched else self.op.forward(op_data, state)
            if isinstance(result, FilteredData):
                return result
            return result if self.op.out_list else [result]
        return [data[index] for index in self._passthrough]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        return self._run(data, state, batched=False)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        return self._run(data, state, batched=True)

    def __repr__(self) -> str:
        return f"Sometimes({self.op!r}, prob={self.prob})"
