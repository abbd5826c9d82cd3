"""The bases of univariate ops: `UnivariateOp` (each input key transformed on its own into the matching output key)
and `ImageOnlyAlbumentation` (an albumentations image-only transform; defined with the albumentations glue in
`fe_core.op.numpyop.albumentations_support` and re-exported here, where FastEstimator has it)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.albumentations_support import ImageOnlyAlbumentation
from fe_core.op.numpyop.numpyop import NumpyOp

__all__ = ["UnivariateOp", "ImageOnlyAlbumentation"]


@fe_export("fe.op.numpyop.univariate.univariate.UnivariateOp", "fe.op.numpyop.univariate.UnivariateOp")
class UnivariateOp(NumpyOp):
    """An op that maps `inputs[i]` to `outputs[i]` with the same transform, independently for each key.

    Subclasses implement `transform_sample(value)` and, when they can compute the same thing on a whole batch at once,
    `transform_batch(values)` plus `batch_capable = True`. As in FastEstimator, `forward` always receives and returns
    lists (one entry per key), whether `inputs` was given as a string or a list.

    Args:
        inputs: Key(s) to read.
        outputs: Key(s) to write, as many as `inputs`.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If the number of outputs differs from the number of inputs.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs) or not self.inputs:
            raise ValueError(f"{type(self).__name__} needs as many outputs as inputs (at least one), got inputs "
                             f"{self.inputs} and outputs {self.outputs}")
        self.in_list, self.out_list = True, True

    def transform_sample(self, value: Any) -> Any:
        """Transform one sample's value of one key."""
        raise NotImplementedError

    def transform_batch(self, values: Any) -> Any:
        """Transform a batch (sample axis first) of one key; the default applies `transform_sample` per sample."""
        return np.stack([self.transform_sample(value) for value in values])

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        transform = self.transform_sample
        return [transform(value) for value in data]

    def forward_batch(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        transform = self.transform_batch
        return [transform(values) for values in data]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(inputs={self.inputs}, outputs={self.outputs})"
