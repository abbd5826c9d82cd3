"""`Repeat`: run a NumpyOp several times in a row, a fixed number of times or while a condition holds."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.batch import Batch
from fe_core.op.numpyop.meta.nested_state import MetaOpStateMixin
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import ungroup_outputs
from fe_core.op.numpyop.remove_if import FilteredData

__all__ = ["Repeat"]


@fe_export("fe.op.numpyop.meta.repeat.Repeat", "fe.op.numpyop.meta.Repeat")
class Repeat(MetaOpStateMixin, NumpyOp):
    """Run `op` several times in a row, each run reading what the previous one wrote.

    Args:
        op: The NumpyOp to repeat.
        repeat: How many times to run `op` (at least 1), or a function whose argument names are data keys: `op` runs,
            then the function is called on the current values of those keys, and `op` runs again while it returns
            True (so `op` always runs at least once).
        max_iter: The most times `op` may run when `repeat` is a function (None: no limit).

    Raises:
        ValueError: If `repeat` is not a positive int or a function, `op` is not a NumpyOp or is a Batch, or
            `max_iter` is not None or a positive int.

    Example:
        >>> from fe_core.op.numpyop.lambda_op import LambdaOp
        >>> add_one = LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")
        >>> Repeat(add_one, repeat=3).forward([0], {})
        [3]
        >>> Repeat(add_one, repeat=lambda x: x < 10).forward([0], {})
        [10]
    """

    def __init__(self,
                 op: NumpyOp,
                 repeat: Union[int, Callable[..., bool]] = 1,
                 max_iter: Optional[int] = None) -> None:
        if isinstance(op, Batch) or not isinstance(op, NumpyOp):
            raise ValueError(f"Repeat needs a NumpyOp other than Batch, got {type(op).__name__}")
        if callable(repeat):
            repeat_inputs = list(inspect.signature(repeat).parameters)
        elif isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise ValueError(f"Repeat repeat must be a positive int or a function, got {repeat!r}")
        else:
            repeat_inputs = []
        if max_iter is not None and (isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1):
            raise ValueError(f"Repeat max_iter must be None or a positive int, got {max_iter!r}")
        inputs = list(op.inputs)
        # keys the condition reads: data keys unless the op itself writes them (then they exist after the first run)
        inputs += [key for key in repeat_inputs if key not in inputs and key not in op.outputs]
        super().__init__(inputs=inputs, outputs=list(op.outputs), mode=op.mode, ds_id=op.ds_id)
        self.in_list, self.out_list = True, True
        self.ops: List[NumpyOp] = [op]  # FastEstimator's attribute (the op is `ops[0]`)
        self.repeat = repeat
        self.max_iter = max_iter
        self._repeat_inputs = repeat_inputs
        self.batch_capable = bool(getattr(op, "batch_capable", False)) and not callable(repeat)

    @property
    def op(self) -> NumpyOp:
        """The repeated op."""
        return self.ops[0]

    def get_child_ops(self) -> List[NumpyOp]:
        """The repeated op."""
        return [self.ops[0]]

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Set the repeated op's augmentation intensity (called by the RUA op).

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).

        Raises:
            AttributeError: If the op has no `set_rua_level` method.
        """
        self._set_children_rua_level(magnitude_coef)

    def _run(self, data: List[Any], state: Dict[str, Any], batched: bool) -> Union[FilteredData, List[Any]]:
        op = self.ops[0]
        store = dict(zip(self.inputs, data))
        forward = op.forward_batch if batched else op.forward
        runs = 0
        while True:
            op_data = [store[key] for key in op.inputs] if op.in_list else store[op.inputs[0]]
            result = forward(op_data, state)
            if isinstance(result, FilteredData):
                return result
            if op.out_list:
                store.update(zip(op.outputs, ungroup_outputs(op, result)))
            elif op.outputs:
                store[op.outputs[0]] = result
            runs += 1
            if callable(self.repeat):
                if self.max_iter is not None and runs >= self.max_iter:
                    break
                if not self.repeat(*[store[key] for key in self._repeat_inputs]):
                    break
            elif runs >= self.repeat:
                break
        return [store[key] for key in self.outputs]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the op on one sample as many times as `repeat` says."""
        return self._run(data, state, batched=False)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Union[FilteredData, List[Any]]:
        """Run the op on a batch as many times as `repeat` says (a function sees batched values)."""
        return self._run(data, state, batched=True)

    def __repr__(self) -> str:
        return f"Repeat({self.ops[0]!r}, repeat={getattr(self.repeat, '__name__', self.repeat)}, max_iter={self.max_iter})"
