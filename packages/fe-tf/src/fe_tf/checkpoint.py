"""Saving and loading Keras models (Keras 3 or tf-keras) with their optimizer state.

Files written into a directory for a model named `name`:

* `<name>.weights.h5`: the weights, in Keras 3's own format (`model.save_weights`).
* `<name>_opt.npz` (when the optimizer is saved): every variable of every optimizer the model has (all the values of
  an optimizer Scheduler), stored by position as `opt<i>/<j>` with their paths in `opt<i>/paths` for checking, plus
  the loss-scale state of mixed precision (it is part of a `LossScaleOptimizer`'s variables) and the states of the
  model's random seed generators (`rng/<j>`, e.g. Dropout's), which `save_weights` leaves out. Read back with
  `allow_pickle=False`.

Both are serialized before they touch the disk and hashed on the way there: `save_model` returns `WrittenFile`s with
the size and sha256 of the bytes meant to be written, so a checkpoint detects a file damaged after its write.

Example:
    >>> # files = save_model(model, "/tmp/ckpt", save_optimizer=True)  # ['model.weights.h5', 'model_opt.npz']
    >>> # load_model(model, "/tmp/ckpt", load_optimizer=True)  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import warnings
from typing import Any, Dict, Iterator, List

import numpy as np
from fe_core.checkpoint.hashed_file import write_hashed_file

from fe_tf._keras import optimizer_variables, random_state_variables, variable_path
from fe_tf.model_building import build_optimizers_of
from fe_tf.optimizers import scheduled_optimizers

__all__ = ["weights_file", "optimizer_file", "save_model", "load_model", "load_weights", "load_optimizer_state"]


def weights_file(model_name: str) -> str:
    """The file name of a model's weights."""
    return f"{model_name}.weights.h5"


def optimizer_file(model_name: str) -> str:
    """The file name of a model's optimizer (and random generator) state."""
    return f"{model_name}_opt.npz"


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", None) or getattr(model, "name", "model"))


def _seed_variables(model: Any) -> List[Any]:
    """The model's variables that are not weights: the states of its layers' random seed generators."""
    weights = {id(variable) for variable in model.weights}
    return [variable for variable in model.variables if id(variable) not in weights] + random_state_variables(model)


@contextlib.contextmanager
def _optimizers_detached(model: Any) -> Iterator[None]:
    """Hide the optimizers fe attaches to the model while Keras saves or loads weights.

    Keras 3 walks a model's attributes and would otherwise write `model.current_optimizer`'s variables into the
    weights file (and read them back even when the optimizer is not to be loaded).
    """
    attached = {name: model.__dict__[name] for name in ("optimizer", "current_optimizer") if name in model.__dict__}
    for name in attached:
        setattr(model, name, None)
    try:
        yield
    finally:
        for name, value in attached.items():
            setattr(model, name, value)


def _name_for_layout(path: str) -> str:
    """The file name under which Keras reads `path`'s HDF5 layout: Keras picks the layout from the name, '.weights.h5'
    for its current format and any other '.h5' for the legacy one, while fe's model savers write FastEstimator's
    `<name>.h5` in the legacy layout (older fe versions in the current one). `path` itself when its name fits."""
    if not path.endswith((".h5", ".hdf5")):
        return path
    import h5py  # pylint: disable=import-outside-toplevel  (a Keras dependency)
    try:
        with h5py.File(path, "r") as file:
            legacy = "layer_names" in file.attrs or "model_weights" in file
            current = not legacy and ("vars" in file or "layers" in file)
    except OSError:
        return path
    if current and not path.endswith(".weights.h5"):
        return weights_file("model")
    if legacy and path.endswith(".weights.h5"):
        return "model.h5"
    return path


def load_weights(model: Any, path: str) -> None:
    """Load weights into `model` from a Keras file (`.weights.h5`, `.keras`, or a `.h5` in either HDF5 layout, as
    ModelSaver and BestModelSaver write under FastEstimator's names), whatever layout its name suggests.

    Raises:
        FileNotFoundError: If `path` does not exist (the message names the model).
    """
    path = os.path.abspath(os.path.expanduser(str(path)))
    if not os.path.exists(path):
        raise FileNotFoundError(f"Weights file {path!r} for model {_model_name(model)!r} does not exist")
    name = _name_for_layout(path)
    if name != path:
        directory = tempfile.mkdtemp(prefix="fe-weights-")
        alias = os.path.join(directory, name)  # the name Keras reads this layout under
        try:
            try:
                os.link(path, alias)
            except OSError:
                shutil.copyfile(path, alias)
            with _optimizers_detached(model):
                model.load_weights(alias)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        return
    with _optimizers_detached(model):
        model.load_weights(path)


def save_weights(model: Any, path: str) -> str:
    """Write the model's weights alone to `path` (Keras 3 needs the name to end in `.weights.h5`); return `path`."""
    with _optimizers_detached(model), warnings.catch_warnings():
        # Keras' h5 writer converts TensorFlow variables with np.array(copy=False), which numpy 2 reports
        warnings.filterwarnings("ignore", message="__array__ implementation doesn't accept a copy keyword",
                                category=DeprecationWarning)
        model.save_weights(path)
    return path


class _WeightsBuffer(io.BytesIO):
    """An in-memory `.weights.h5` file: Keras writes HDF5 into a BytesIO, and checks the extension through str()."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def __str__(self) -> str:
        return self._name


def _weights_bytes(model: Any, name: str) -> bytes:
    """The bytes of the model's `.weights.h5` file, serialized in memory (so they can be hashed before any write)."""
    buffer = _WeightsBuffer(weights_file(name))
    try:
        save_weights(model, buffer)  # type: ignore[arg-type]
        return buffer.getvalue()
    except (TypeError, AttributeError):  # a Keras taking paths only (tf-keras): write into a private directory
        directory = tempfile.mkdtemp(prefix="fe-weights-")
        try:
            path = save_weights(model, os.path.join(directory, weights_file(name)))
            with open(path, "rb") as file:
                return file.read()
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def save_model(model: Any, save_dir: str, save_optimizer: bool) -> List[str]:
    """Save the model's weights (and optimizer state) into `save_dir`.

    Each file is serialized first (the weights into an in-memory HDF5 file, the optimizer state as a streamed
    `.npz`), hashed on its way to the disk and written atomically (temporary sibling, fsync, rename).

    Args:
        model: A Keras model built with `fe.build`.
        save_dir: An existing directory.
        save_optimizer: Whether to write the optimizer state too.

    Returns:
        The names of the files written, relative to `save_dir`, as `WrittenFile`s carrying the size and sha256 of the
        bytes meant to be written (checkpoints record them in their manifest).
    """
    name = _model_name(model)
    weights = _weights_bytes(model, name)
    files: List[str] = [write_hashed_file(os.path.join(save_dir, weights_file(name)),
                                          lambda file: file.write(weights)).renamed(weights_file(name))]
    if save_optimizer:
        arrays: Dict[str, np.ndarray] = {}
        optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
        arrays["count"] = np.asarray(len(optimizers))
        for index, optimizer in enumerate(optimizers):
            variables = optimizer_variables(optimizer)
            arrays[f"opt{index}/paths"] = np.asarray([variable_path(variable) for variable in variables],
                                                     dtype=np.str_)
            for position, variable in enumerate(variables):
                arrays[f"opt{index}/{position}"] = np.asarray(variable.numpy())
        for position, variable in enumerate(_seed_variables(model)):
            arrays[f"rng/{position}"] = np.asarray(variable.numpy())
        files.append(write_hashed_file(os.path.join(save_dir, optimizer_file(name)),
                                       lambda file: np.savez(file, **arrays)).renamed(optimizer_file(name)))
    return files


def _assign(variable: Any, value: np.ndarray, what: str, path: str) -> None:
    if tuple(variable.shape) != tuple(value.shape):
        raise ValueError(f"{path}: {what} ({variable_path(variable)}) has shape {tuple(variable.shape)} but the file "
                         f"holds {tuple(value.shape)}; the model or optimizer differs from the one saved")
    variable.assign(value.astype(variable.dtype.name if hasattr(variable.dtype, "name") else variable.dtype))


def load_model(model: Any, load_dir: str, load_optimizer: bool) -> None:
    """Load what `save_model` wrote for this model (matched by its `model_name`).

    Raises:
        FileNotFoundError: If a file is missing.
        ValueError: If the optimizer state does not fit the model's optimizers.
    """
    name = _model_name(model)
    load_weights(model, os.path.join(load_dir, weights_file(name)))
    if load_optimizer:
        load_optimizer_state(model, load_dir, name)


def load_optimizer_state(model: Any, load_dir: str, name: str) -> None:
    """Load `<load_dir>/<name>_opt.npz` (written by `save_model`) into the model's optimizers and seed generators.

    Raises:
        FileNotFoundError: If the file is missing.
        ValueError: If the optimizer state does not fit the model's optimizers.
    """
    path = os.path.join(load_dir, optimizer_file(name))
    if not os.path.exists(path):
        raise FileNotFoundError(f"Optimizer state file {path!r} for model {name!r} does not exist")
    build_optimizers_of(model)  # a model whose weights came after fe.build: its optimizer state exists from now on
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
    with np.load(path, allow_pickle=False) as saved:
        count = int(saved["count"])
        if count != len(optimizers):
            raise ValueError(f"{path}: holds the state of {count} optimizer(s) but model {name!r} has "
                             f"{len(optimizers)}")
        for index, optimizer in enumerate(optimizers):
            variables = optimizer_variables(optimizer)
            saved_count = len(saved[f"opt{index}/paths"])
            if saved_count != len(variables):
                raise ValueError(f"{path}: optimizer {index} of model {name!r} has {len(variables)} variables but "
                                 f"{saved_count} were saved")
            for position, variable in enumerate(variables):
                _assign(variable, saved[f"opt{index}/{position}"], f"optimizer {index} variable {position}", path)
        seeds = _seed_variables(model)
        for position, variable in enumerate(seeds):
            key = f"rng/{position}"
            if key in saved.files:
                _assign(variable, saved[key], f"random seed state {position}", path)
