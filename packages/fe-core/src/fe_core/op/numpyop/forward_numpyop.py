"""`forward_numpyop`: run a list of NumpyOps on a data dictionary (a sample or a batch), in place."""
from __future__ import annotations

from typing import Any, Dict, List, MutableMapping, Optional

from fe_core.export import fe_export
from fe_core.op.numpyop.delete import Delete
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.numpyop.remove_if import FilteredData
from fe_core.op.op import get_inputs_by_op, write_outputs_by_op

__all__ = ["forward_numpyop"]


@fe_export("fe.op.numpyop.numpyop.forward_numpyop", "fe.op.numpyop.forward_numpyop")
def forward_numpyop(ops: List[NumpyOp],
                    data: MutableMapping[str, Any],
                    state: Dict[str, Any],
                    batched: Optional[str] = None,
                    shared: bool = True) -> Optional[FilteredData]:
    """Run `ops` one after another on the data dictionary `data`, in place.

    Each op reads its inputs from `data` and writes its outputs back; a `Delete` op removes its keys. An op that
    returns a `FilteredData` stops the run, and that FilteredData is returned (the caller drops the sample or batch).

    Args:
        ops: The NumpyOps to run, in order.
        data: The data dictionary, modified in place.
        state: The execution context, e.g. {"mode": "train"}; it must hold at least the mode.
        batched: None when `data` is one sample (ops run `forward`); else the kind of tensors the batch holds: 'np'
            (numpy arrays), 'torch' or 'tf' (ops run `forward_batch`; the batch's tensors are handed to them as numpy
            arrays and their results converted to that framework's tensors, as `fe.backend.to_tensor` does).
        shared: Whether torch results go to shared memory (only applicable when `batched` is 'torch').

    Returns:
        The FilteredData an op returned, else None.

    Raises:
        ValueError: If `batched` is not None, 'np', 'torch' or 'tf', or an op returns the wrong number of outputs.

    Example:
        >>> from fe_core.op.numpyop.lambda_op import LambdaOp
        >>> data = {"x": 1}
        >>> forward_numpyop([LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y")], data, {"mode": "train"})
        >>> data
        {'x': 1, 'y': 2}
    """
    from fe_core.backend.conversion import to_tensor  # lazily: importing fe_core.backend costs time, needed rarely
    if batched not in (None, "np", "torch", "tf"):
        raise ValueError(f"forward_numpyop: batched must be None, 'np', 'torch' or 'tf', got {batched!r}")
    convert = batched in ("torch", "tf")
    for op in ops:
        if isinstance(op, Delete):
            for key in op.inputs:
                data.pop(key, None)
            continue
        op_data = get_inputs_by_op(op, data)
        if convert:
            op_data = to_tensor(op_data, target_type="np")
        result = op.forward(op_data, state) if batched is None else op.forward_batch(op_data, state)
        if isinstance(result, FilteredData):
            return result
        if not op.outputs:
            continue
        if convert:
            result = to_tensor(result, target_type=batched, shared_memory=shared)
        write_outputs_by_op(op, data, result)
    return None
