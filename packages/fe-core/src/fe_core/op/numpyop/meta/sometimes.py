"""`Sometimes`: run a NumpyOp with a given probability."""
from __future__ import annotations

from typing import Any, Dict, List, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.meta.nested_state import MetaOpStateMixin
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import ungroup_outputs
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Sometimes"]


@fe_export("fe.op.numpyop.meta.sometimes.Sometimes", "fe.op.numpyop.meta.Sometimes")
class Sometimes(MetaOpStateMixin, NumpyOp):
    """Run `numpy_op` with probability `prob` (drawn from numpy's global random state); otherwise pass data through.

    The draw is made per call: per sample before `Batch`, per batch after it (and as network postprocessing). When the
    op is skipped, each output key keeps its current value, so every output key must already exist (create a default
    with a LambdaOp first if needed). The wrapped op's state is saved in checkpoints with the Sometimes.

    Args:
        numpy_op: The op to run sometimes.
        prob: Probability of running it, in [0, 1].

    Raises:
        ValueError: If `numpy_op` is a Batch or `prob` is out of range.

    Example:
        >>> from fe_core.op.numpyop.lambda_op import LambdaOp
        >>> op = Sometimes(LambdaOp(fn=lambda x: -x, inputs="x", outputs="x"), prob=1.0)
        >>> op.forward([3], {})
        [-3]
    """

    def __init__(self, numpy_op: NumpyOp, prob: float = 0.5) -> None:
        if isinstance(numpy_op, Batch):
            raise ValueError("Sometimes cannot wrap a Batch op")
        if not isinstance(numpy_op, NumpyOp):
            raise ValueError(f"Sometimes needs a NumpyOp, got {type(numpy_op).__name__}")
        if not 0 <= prob <= 1:
            raise ValueError(f"Sometimes prob must be in [0, 1], got {prob!r}")
        extra_inputs = [key for key in numpy_op.outputs if key not in numpy_op.inputs]
        super().__init__(inputs=list(numpy_op.inputs) + extra_inputs, outputs=list(numpy_op.outputs),
                         mode=numpy_op.mode, ds_id=numpy_op.ds_id)
        self.op = numpy_op
        self.prob = prob
        self._op_inputs = len(numpy_op.inputs)
        self._passthrough = [self.inputs.index(key) for key in self.outputs]

    def get_child_ops(self) -> List[NumpyOp]:
        """The wrapped op."""
        return [self.op]

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set the wrapped op's augmentation intensity (called by the RUA op).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).

        Raises:
            AttributeError: If the wrapped op has no `set_rua_level` method.
        """
        self._set_children_rua_level(magnitude_coef)

    def _run(self, data: List[Any], state: Dict[str, Any], batched: bool) -> Union[FilteredData, List[Any]]:
        if self.prob > np.random.uniform():
            op_data: Any = data[:self._op_inputs]
            if not self.op.in_list:
                op_data = op_data[0]
            result = self.op.forward_batch(op_data, state) if batched else self.op.forward(op_data, state)
            if isinstance(result, FilteredData):
                return result
            return ungroup_outputs(self.op, result) if self.op.out_list else [result]
        return [data[index] for index in self._passthrough]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the op on the sample with probability `prob`, else return the current output values."""
        return self._run(data, state, batched=False)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the op on the whole batch with probability `prob`, else return the current output values."""
        return self._run(data, state, batched=True)

    def __repr__(self) -> str:
        return f"Sometimes({self.op!r}, prob={self.prob})"
