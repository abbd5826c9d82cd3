"""`ReadMat`: read arrays from a MATLAB .mat file."""
from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Union

from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.optional import import_optional

__all__ = ["ReadMat"]


@fe_export("fe.op.numpyop.multivariate.read_mat.ReadMat", "fe.op.numpyop.multivariate.ReadMat")
class ReadMat(NumpyOp):
    """Read variables from a .mat file (one file per sample) into data keys. Needs SciPy (`fe[data]`).

    Args:
        inputs: The key holding the file path.
        outputs: The key(s) to write the variables to.
        mat_keys: The variable names in the file, one per output (default: the output names, so variables can be
            renamed by giving their file names here and the new names in `outputs`).
        mode: Mode(s) to run in; None runs in every mode.
        ds_id: Dataset id(s) to run on; None runs on every dataset.
        parent_path: A folder prepended to each path.

    Raises:
        ValueError: If `mat_keys` and `outputs` differ in number.
        KeyError: (when run) If a variable is missing from a file; the message names the file.

    Example:
        >>> # ReadMat(inputs="file", outputs=["image", "label"], parent_path="/data/mats")
    """

    def __init__(self,
                 inputs: str,
                 outputs: Union[str, Iterable[str]],
                 mat_keys: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 parent_path: str = '') -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        self.mat_keys: List[str] = to_list(mat_keys) if mat_keys is not None else list(self.outputs)
        if len(self.mat_keys) != len(self.outputs):
            raise ValueError(f"ReadMat: mat_keys {self.mat_keys} must match outputs {self.outputs} one to one")
        self.parent_path = parent_path
        self.out_list = True

    def forward(self, data: str, state: Dict[str, Any]) -> List[Any]:
        """Load the file at `data` and return its variables named in `mat_keys`."""
        loadmat = import_optional("scipy.io", extra="data", feature="ReadMat").loadmat
        path = os.path.normpath(os.path.join(self.parent_path, data))
        contents = loadmat(path)
        missing = [key for key in self.mat_keys if key not in contents]
        if missing:
            raise KeyError(f"ReadMat: {path} has no variable(s) {missing}; it holds "
                           f"{sorted(key for key in contents if not key.startswith('__'))}")
        return [contents[key] for key in self.mat_keys]
