"""`NumpyOp`: ops that run on numpy data in the Pipeline (per sample or per batch) and as network postprocessing;
`forward_numpyop` runs a list of them on a data dictionary."""
from __future__ import annotations

from typing import Any, Dict, List, MutableMapping, Optional

import numpy as np

from fe_core.op.op import Op, get_inputs_by_op, write_outputs_by_op
from fe_core.export import fe_export

__all__ = ["NumpyOp", "forward_numpyop"]


@fe_export("fe.op.numpyop.numpyop.NumpyOp", "fe.op.numpyop.NumpyOp", "fe.op.NumpyOp")
class NumpyOp(Op):
    """An op on numpy data.

    In the Pipeline, ops before `Batch` run on single samples through `forward`. An op whose `forward_batch` computes
    on a whole batch exactly what `forward` computes per sample sets the class attribute `batch_capable = True`; the
    Pipeline may then run it once on the collated batch instead of once per sample, which is much faster. As network
    postprocessing (pops), NumpyOps always run on batches through `forward_batch`.

    Args:
        inputs: Key(s) to read.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    batch_capable: bool = False

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        """Transform one sample's value(s)."""
        return data

    def forward_batch(self, data: Any, state: Dict[str, Any]) -> Any:
        """Transform a batch's value(s) (each with the batch on axis 0).

        The default runs `forward` on each sample and stacks the results, so any NumpyOp can be used on batches.
        """
        values: List[Any] = data if self.in_list else [data]
        size = len(values[0]) if values else 0
        results = []
        for index in range(size):
            sample = [value[index] for value in values]
            results.append(self.forward(sample if self.in_list else sample[0], state))
        if not self.outputs:
            return None
        if self.out_list:
            return [np.stack([result[i] for result in results]) for i in range(len(self.outputs))]
        return np.stack(results)


@fe_export("fe.op.numpyop.numpyop.forward_numpyop", "fe.op.numpyop.forward_numpyop")
def forward_numpyop(ops: List[NumpyOp],
                    data: MutableMapping[str, Any],
                    state: Dict[str, Any],
                    batched: Optional[str] = None,
                    shared: bool = True) -> Optional[Any]:
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
    from fe_core.backend.conversion import to_tensor  # lazily: fe_core.backend is not needed on the sample path
    from fe_core.op.numpyop.delete import Delete  # delete.py imports this module
    from fe_core.op.numpyop.remove_if import FilteredData
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
