"""`LambdaOp`: a NumpyOp whose forward is any function."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Union

from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.export import fe_export

__all__ = ["LambdaOp"]


@fe_export("fe.op.numpyop.numpyop.LambdaOp", "fe.op.numpyop.LambdaOp")
class LambdaOp(NumpyOp):
    """Run `fn(*values_of_inputs)` and write what it returns to `outputs`.

    Before `Batch` it runs on every sample; after `Batch` (and as network postprocessing) `fn` receives whole batches.
    It is not batch-capable: the Pipeline cannot know whether `fn` gives the same results on a batch.

    Args:
        fn: The function; it receives one positional argument per input key.
        inputs: Key(s) to read.
        outputs: Key(s) to write (a list of keys means `fn` returns a sequence of values).
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
        if not callable(fn):
            raise TypeError(f"LambdaOp fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.in_list = True

    def set_rua_level(self, magnitude_coef: float) -> None:
        """Called by the RUA op to set the augmentation intensity; a LambdaOp has no intensity, so this does nothing.

        Args:
            magnitude_coef: The desired augmentation intensity (range [0-1]).
        """

    def forward(self, data: List[Any], state: Dict[str, Any]) -> Any:
        return self.fn(*data)

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> Any:
        return self.fn(*data)

    def __repr__(self) -> str:
        return f"LambdaOp(fn={getattr(self.fn, '__name__', self.fn)}, inputs={self.inputs}, outputs={self.outputs})"
