"""`Repeat` and `Fuse`: run a TensorOp several times in a row, or several TensorOps as one."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Union

from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.tensorop.meta.wrapper import WrapperOp, run_wrapped
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["Repeat", "Fuse"]


@fe_export("fe.op.tensorop.meta.repeat.Repeat", "fe.op.tensorop.meta.Repeat")
class Repeat(WrapperOp):
    """Run a TensorOp several times in a row, each run reading what the previous one wrote.

    `repeat` is a count, or a function whose argument names are keys: the op then runs until the function returns
    False (checked after each run, so the op runs at least once), at most `max_iter` times. The Repeat reads the op's
    inputs plus the function's arguments that the op does not write (those exist after its first run). On TensorFlow a
    function-controlled repeat is a `tf.while_loop` inside the traced step (the repeated values must keep their
    shapes and dtypes).

    Example:
        >>> # ops=[LambdaOp(fn=lambda: 0, outputs="z"), Repeat(AddOne(inputs="z", outputs="z"), repeat=5)]
        >>> # Repeat(AddOne(inputs="z", outputs="z"), repeat=lambda z: z < 6.5)  # doctest: +SKIP

    Args:
        op: The TensorOp to repeat.
        repeat: How many times (>= 1), or a function of keys returning whether to run again.
        max_iter: The most runs when `repeat` is a function (None: no limit).

    Raises:
        ValueError: If `repeat` or `max_iter` are invalid, or `op` is not a TensorOp.
    """

    kernel_name = "repeat"

    def __init__(self, op: TensorOp, repeat: Union[int, Callable[..., bool]] = 1,
                 max_iter: Optional[int] = None) -> None:
        self.ops = self.check_ops([op], "Repeat")
        if callable(repeat):
            self.repeat_inputs = list(inspect.signature(repeat).parameters)
        elif isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise ValueError(f"Repeat repeat must be a positive int or a function, got {repeat!r}")
        else:
            self.repeat_inputs = []
        if max_iter is not None and (not isinstance(max_iter, int) or max_iter < 1):
            raise ValueError(f"Repeat max_iter must be None or a positive int, got {max_iter!r}")
        keys = list(op.inputs)
        for key in self.repeat_inputs:
            if key not in keys and key not in op.outputs:
                keys.append(key)
        super().__init__(inputs=keys, outputs=op.outputs, mode=op.mode, ds_id=op.ds_id)
        self.mode, self.ds_id = op.mode, op.ds_id
        self.repeat = repeat
        self.max_iter = max_iter
        self.in_list, self.out_list = True, True

    @property
    def op(self) -> TensorOp:
        """The repeated op."""
        return self.ops[0]

    def step(self, store: Dict[str, Any], state: Dict[str, Any]) -> None:
        """One run of the op on `store`."""
        run_wrapped(self.ops[0], store, state)

    def should_continue(self, store: Dict[str, Any]) -> Any:
        """The `repeat` function's value on `store` (a bool or a boolean tensor)."""
        return self.repeat(*[store[key] for key in self.repeat_inputs])  # type: ignore[operator]

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        store = dict(zip(self.inputs, data))
        if not callable(self.repeat):
            for _ in range(self.repeat):
                self.step(store, state)
            return [store[key] for key in self.outputs]
        self.ensure_built(data)
        return self._kernel(self, store, state)


@fe_export("fe.op.tensorop.meta.fuse.Fuse", "fe.op.tensorop.meta.Fuse")
class Fuse(WrapperOp):
    """Run a sequence of TensorOps as one op (for example to schedule or wrap them together).

    Its inputs are the keys the ops read before any of them writes them; its outputs every key they write, less
    those a `Delete` inside removes (and no later op writes again), as in FastEstimator.

    Args:
        ops: The TensorOps, in order; they must share one mode and ds_id (Schedulers are not supported inside, but
            the Fuse itself may be scheduled).

    Raises:
        ValueError: If `ops` are not TensorOps or their modes differ.
    """

    def __init__(self, ops: Union[TensorOp, List[TensorOp]]) -> None:
        self.ops = self.check_ops(to_list(ops), "Fuse")
        first = self.ops[0]
        for op in self.ops[1:]:
            if op.mode != first.mode or op.ds_id != first.ds_id:
                raise ValueError(f"Fuse ops must share one mode and ds_id: {type(first).__name__} runs in "
                                 f"{first.mode or 'every mode'}, {type(op).__name__} in {op.mode or 'every mode'}")
        inputs: List[str] = []
        outputs: List[str] = []
        deleted: List[str] = []
        for op in self.ops:
            for key in op.inputs:
                if key not in outputs and key not in inputs:
                    inputs.append(key)
            deletes = getattr(op, "fe_deletes", None) or []
            if deletes:  # a Delete inside: the Fuse does not write the key (FastEstimator's outputs)
                outputs = [key for key in outputs if key not in deletes]
                deleted += [key for key in deletes if key not in deleted]
                continue
            for key in op.outputs:
                if key not in outputs:
                    outputs.append(key)
                if key in deleted:  # written again after its Delete
                    deleted.remove(key)
        super().__init__(inputs=inputs, outputs=outputs, mode=first.mode, ds_id=first.ds_id)
        self.mode, self.ds_id = first.mode, first.ds_id
        self.in_list, self.out_list = True, True
        self.fe_deletes = deleted or None  # removed from the batch too, as a Delete outside a Fuse would

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        store = dict(zip(self.inputs, data))
        for op in self.ops:
            run_wrapped(op, store, state)
            for key in getattr(op, "fe_deletes", None) or ():
                store.pop(key, None)
        return [store.get(key) for key in self.outputs]
