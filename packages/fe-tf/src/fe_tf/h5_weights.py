"""Weights files in the HDF5 layout Keras' `model.load_weights('<name>.h5')` reads, on Keras 3 and on tf-keras.

FastEstimator's model savers (ModelSaver, BestModelSaver, `fe.backend.save_model`) write `<name>.h5` with Keras 2's
`model.save_weights('<name>.h5')`: the legacy HDF5 layout (one group per layer, `layer_names` and `weight_names`
attributes). FastEstimator scripts read such a file back with Keras' own `model.load_weights(path)` (a pretrained
backbone rebuilt in a new `model_fn`), and Keras reads any name ending in `.h5` (but not `.weights.h5`) as that
layout. So fe writes its `.h5` files in it too: tf-keras through its own `save_weights` (the `.h5` suffix selects
the layout), Keras 3 through the legacy writer its `load_weights` pairs with. fe's own loaders read both layouts.

Example:
    >>> # save_h5_weights(model, "/tmp/run/backbone_best_accuracy.h5")
    >>> # fresh_backbone.load_weights("/tmp/run/backbone_best_accuracy.h5")  # Keras' own reader
"""
from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from typing import Any

from fe_tf._keras import KERAS2
from fe_tf.checkpoint import save_weights

__all__ = ["save_h5_weights"]


def _write_legacy_layout(model: Any, path: str) -> None:
    """Write `model`'s weights to `path` (ending in '.h5') in the legacy layout."""
    if KERAS2:  # tf-keras' save_weights picks the legacy layout for a '.h5' name
        save_weights(model, path)
        return
    import h5py  # pylint: disable=import-outside-toplevel  (a Keras dependency)
    from keras.src.legacy.saving import legacy_h5_format  # pylint: disable=import-outside-toplevel
    with h5py.File(path, "w") as file, warnings.catch_warnings():
        # Keras converts TensorFlow variables with np.array(copy=False), which numpy 2 reports
        warnings.filterwarnings("ignore", message="__array__ implementation doesn't accept a copy keyword",
                                category=DeprecationWarning)
        legacy_h5_format.save_weights_to_hdf5_group(file, model)


def save_h5_weights(model: Any, path: str) -> str:
    """Write `model`'s weights to `path` in the layout `model.load_weights(path)` reads for a `.h5` name.

    The file is written under a private `.h5` name in `path`'s folder and moved to `path` (which may be a temporary
    name of the caller's). A model the legacy layout cannot hold (two weights of one layer with the same name) is
    written in Keras' current `.weights.h5` format instead, with a warning: fe's loaders read it, Keras'
    `load_weights` reads it only under a `.weights.h5` name.

    Args:
        model: A Keras model (Keras 3 or tf-keras).
        path: The file to write.

    Returns:
        `path`.
    """
    directory = tempfile.mkdtemp(prefix=".fe-h5-", dir=os.path.dirname(os.path.abspath(path)) or None)
    staged = os.path.join(directory, "weights.h5")
    try:
        try:
            _write_legacy_layout(model, staged)
        except (ValueError, RuntimeError, TypeError) as error:  # h5py: a dataset name already exists, ...
            warnings.warn(f"Model {getattr(model, 'name', 'model')!r}: its weights do not fit Keras' legacy .h5 "
                          f"layout ({error}); {path} holds Keras' .weights.h5 format instead, which fe reads but "
                          f"Keras' load_weights reads only under a '.weights.h5' name", stacklevel=2)
            staged = save_weights(model, os.path.join(directory, "weights.weights.h5"))
        os.replace(staged, path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return path
