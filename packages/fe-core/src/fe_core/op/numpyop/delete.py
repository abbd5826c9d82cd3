"""`Delete`: remove keys from the data dictionary."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Union

from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.export import fe_export

__all__ = ["Delete"]


@fe_export("fe.op.numpyop.numpyop.Delete", "fe.op.numpyop.Delete")
class Delete(NumpyOp):
    """Delete key(s) and their values from the data dictionary (the Pipeline removes them after this op).

    Args:
        keys: Existing key(s) to delete.
        mode: Mode(s) in which to delete.
        ds_id: Dataset id(s) on which to delete.

    Example:
        >>> # Pipeline(train_data=ds, ops=[LambdaOp(fn=f, inputs="raw", outputs="x"), Delete("raw")], batch_size=8)
    """

    batch_capable = True

    def __init__(self,
                 keys: Union[str, List[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=keys, mode=mode, ds_id=ds_id)
        if not self.inputs:
            raise ValueError("Delete needs at least one key")

    def forward(self, data: Any, state: Dict[str, Any]) -> None:
        return None

    def forward_batch(self, data: Any, state: Dict[str, Any]) -> None:
        return None
