"""Read the pickles inside public data archives (CIFAR batches, object arrays in .npz files) without running code.

`load_numpy_pickle` admits only what such files hold: builtins (dicts, lists, numbers, strings, bytes) and numpy
arrays / dtypes / scalars (plus `_codecs.encode`, which protocol-2 pickles use to spell bytes). Any other global in the stream (a function, a class to instantiate) raises
`pickle.UnpicklingError` instead of being imported, so a tampered download cannot execute code.
"""
from __future__ import annotations

import io
import pickle
import zipfile
from typing import Any, BinaryIO, Dict

import numpy as np

__all__ = ["load_numpy_pickle", "load_npz_with_objects"]

_ALLOWED = {
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("_codecs", "encode"),  # how protocol-2 pickles written by Python 3 spell bytes
}


class _NumpyOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"Refusing to load {module}.{name} from a data file: only numpy arrays and "
                                         f"plain Python values are allowed")
        if module.startswith("numpy.core.") and hasattr(np, "_core"):
            module = "numpy._core." + module[len("numpy.core."):]
        return super().find_class(module, name)


def load_numpy_pickle(stream: BinaryIO, encoding: str = "bytes") -> Any:
    """Unpickle `stream`, allowing only plain Python values and numpy arrays.

    Args:
        stream: A binary file object.
        encoding: How Python 2 `str` objects are decoded ('bytes' keeps them as bytes, as CIFAR files need).

    Raises:
        pickle.UnpicklingError: If the stream references anything else.
    """
    return _NumpyOnlyUnpickler(stream, encoding=encoding).load()


def load_npz_with_objects(path: str) -> Dict[str, np.ndarray]:
    """Load every array of an .npz file, including object arrays (read with `load_numpy_pickle`, never `pickle`).

    Args:
        path: The .npz file.

    Returns:
        {name: array}.
    """
    arrays: Dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as bundle:
        for member in bundle.namelist():
            if not member.endswith(".npy"):
                continue
            stream = io.BytesIO(bundle.read(member))
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
            if dtype.hasobject:
                array = load_numpy_pickle(stream, encoding="latin1")
            else:
                array = np.frombuffer(stream.read(), dtype=dtype)
                array = array.reshape(shape[::-1]).T if fortran else array.reshape(shape)
            arrays[member[:-4]] = array
    return arrays
