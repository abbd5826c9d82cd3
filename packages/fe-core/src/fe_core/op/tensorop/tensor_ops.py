"""Small generic TensorOps: `Argmax`, `Average`, `LambdaOp`, `Delete`."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Union

from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.export import fe_export

__all__ = ["Argmax", "Average", "LambdaOp", "Delete"]


@fe_export("fe.op.tensorop.argmax.Argmax", "fe.op.tensorop.Argmax")
class Argmax(TensorOp):
    """The index of the maximum of each input tensor along `axis`.

    As in FastEstimator, `axis` counts on the whole tensor, batch axis included, so use `axis=-1` (or 1) for the
    class index of each sample's prediction.

    Args:
        inputs: Key(s) of the tensor(s).
        outputs: Key(s) of the indices (one per input).
        axis: The axis to reduce.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    kernel_name = "argmax"

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 axis: int = 0,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"Argmax needs one output per input, got inputs {self.inputs} outputs {self.outputs}")
        self.in_list, self.out_list = True, True
        self.axis = axis


@fe_export("fe.op.tensorop.average.Average", "fe.op.tensorop.Average")
class Average(TensorOp):
    """The element-wise mean of the input tensors (for example to combine several losses).

    Args:
        inputs: The keys to average.
        outputs: The key of the mean.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: str,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.in_list = True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        total = data[0]
        for value in data[1:]:
            total = total + value
        return total / len(data)


@fe_export("fe.op.tensorop.tensorop.LambdaOp", "fe.op.tensorop.LambdaOp")
class LambdaOp(TensorOp):
    """Apply a function to the input tensor(s); the function gets one argument per input key.

    Args:
        fn: The function (framework code is fine: it runs inside the Network).
        inputs: Key(s) to read.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Example:
        >>> op = LambdaOp(fn=lambda x, y: x + y, inputs=("x", "y"), outputs="z")
        >>> op.forward([1, 2], {})
        3
    """

    def __init__(self,
                 fn: Callable[..., Any],
                 inputs: Union[None, str, Iterable[str]] = None,
                 outputs: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.fn = fn
        self.in_list = True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        return self.fn(*data)


@fe_export("fe.op.tensorop.tensorop.Delete", "fe.op.tensorop.Delete")
class Delete(TensorOp):
    """Remove key(s) from the batch so nothing downstream sees (or copies) them.

    Args:
        keys: The key(s) to remove.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    def __init__(self,
                 keys: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=keys, mode=mode, ds_id=ds_id)
        self.fe_deletes = list(self.inputs)

    def forward(self, data: Any, state: Dict[str, Any]) -> None:
        return None
