"""`NumpyOp`: ops that run on numpy data in the Pipeline (per sample or per batch) and as network postprocessing."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from fe_core.op.op import Op
from fe_core.export import fe_export

__all__ = ["NumpyOp"]


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
