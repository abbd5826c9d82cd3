"""`ModelSaver`: save a model's weights every n epochs or steps, keeping the latest few; and `save_model_files`, the
crash-safe write both model-saving traces use."""
from __future__ import annotations

import numbers
import os
import re
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Union

from fe_core.distributed.communicator import is_main_process
from fe_core.checkpoint.atomic_dir import fsync_directory, fsync_file
from fe_core.data import Data
from fe_core.framework.registry import backend_for_model, model_backend
from fe_core.trace.adapt.model_metric import model_name_of
from fe_core.trace.freq import Freq, parse_freq
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["ModelSaver", "save_model_files", "remove_model_files", "check_architecture_saving", "can_save_architecture",
           "weights_extension"]


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def weights_extension(backend: Any) -> str:
    """The extension of the weight files ModelSaver and BestModelSaver write for `backend`'s models: FastEstimator's,
    'pt' for torch and 'h5' for TensorFlow (the file holds the HDF5 layout Keras' own `model.load_weights` reads
    for that name; fe's `load_model` and `build(weights_path=...)` read it too)."""
    extension = str(backend.model_extension)
    return "h5" if extension.endswith("weights.h5") else extension


def save_model_files(backend: Any, model: Any, save_dir: str, file_stem: str,
                     save_architecture: bool = False) -> List[str]:
    """Write `model`'s weights to `<save_dir>/<file_stem>.<weights_extension(backend)>` without ever leaving a
    partial file there (and, if asked, the whole model).

    The weights are written by `backend.save_weights` (the backend of the model's own framework) to a temporary
    sibling with the backend's extension, flushed to disk, and moved into place with `os.replace`, so a crash during
    the write leaves the previous file intact. `save_dir` is created if needed.

    Args:
        backend: The backend of `model`'s framework (`fe_core.framework.registry.model_backend(model)`).
        model: The model to save.
        save_dir: The folder to write into.
        file_stem: The file name without its extension ('<model_name>_epoch_3').
        save_architecture: Also save the whole model, architecture included (TensorFlow: `<file_stem>.keras`,
            loadable with `keras.models.load_model`); see `check_architecture_saving`.

    Returns:
        The paths written: the weights first, then the architecture's path if one was saved.

    Example:
        >>> # save_model_files(model_backend(m), m, "/tmp/run", "model_epoch_3")  -> ['/tmp/run/model_epoch_3.pt']
    """
    if not is_main_process():  # a data-parallel run: the weights are the same on every rank; rank 0 writes them
        join = getattr(backend, "join_save_weights", None)  # a sharded model's weights are gathered by every rank
        if callable(join):
            join(model)
        return []
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, f"{file_stem}.{weights_extension(backend)}")
    temporary = os.path.join(save_dir, f".{file_stem}.tmp-{os.getpid()}.{backend.model_extension}")
    try:
        written = backend.save_weights(model, temporary) or temporary
        fsync_file(written)
        os.replace(written, path)
    except BaseException:
        _remove_quietly(temporary)
        raise
    fsync_directory(save_dir)
    paths = [path]
    if save_architecture:
        paths.extend(_save_architecture(backend, model, save_dir, file_stem))
    return paths


def _save_architecture(backend: Any, model: Any, save_dir: str, file_stem: str) -> List[str]:
    """Save the whole model next to its weights: through `backend.save_architecture(model, path_stem)` where the
    backend has one, else through `fe.backend.save_model(..., save_architecture=True)` into a private staging folder
    whose architecture file(s) are then moved into `save_dir` (the staged weights are dropped)."""
    saver = getattr(backend, "save_architecture", None)
    if callable(saver):
        return [str(saver(model, os.path.join(save_dir, file_stem)))]
    from fe_core.backend.models import save_model  # pylint: disable=import-outside-toplevel
    staging = tempfile.mkdtemp(prefix=f".{file_stem}.architecture-", dir=save_dir)
    try:
        weights = os.path.abspath(save_model(model, staging, model_name=file_stem, save_optimizer=False,
                                             save_architecture=True))
        paths = []
        for name in sorted(os.listdir(staging)):
            source = os.path.join(staging, name)
            if os.path.abspath(source) == weights or name.endswith("_opt.npz"):
                continue
            target = os.path.join(save_dir, name)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            os.replace(source, target)
            paths.append(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not paths:
        raise ValueError(f"The {backend.name!r} backend wrote no architecture file for model "
                         f"{model_name_of(model)!r}")
    fsync_directory(save_dir)
    return paths


def own_file_name(name: Any, stem_pattern: "re.Pattern[str]") -> bool:
    """Whether `name` (from a checkpoint) is a plain file name a saver wrote itself: no directory part, no '..',
    and its stem matches the saver's naming pattern."""
    if not isinstance(name, str) or not name or name != os.path.basename(name) or name in (".", ".."):
        return False
    if "/" in name or "\\" in name or "\x00" in name:
        return False
    return stem_pattern.fullmatch(name) is not None


def remove_model_files(paths: List[str], inside: Optional[str] = None) -> None:
    """Delete what `save_model_files` wrote (files or folders); paths already gone are ignored.

    Args:
        paths: The paths to delete.
        inside: When given, only paths directly inside this directory are deleted (never through a symbolic link).
    """
    for path in paths:
        if inside is not None:
            parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
            if parent != os.path.realpath(inside) or os.path.islink(path):
                print(f"FastEstimator-ModelSaver: not removing {path}: it is not a file this saver wrote in {inside}")
                continue
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove_quietly(path)


def can_save_architecture(backend: Any) -> bool:
    """Whether `backend` can save whole models (architecture included): TensorFlow can, torch cannot (as in
    FastEstimator); another backend can by defining `save_architecture(model, path_without_extension) -> path`."""
    return callable(getattr(backend, "save_architecture", None)) or getattr(backend, "name", None) == "tf"


def check_architecture_saving(trace: Trace, backend: Any) -> None:
    """Raise if `trace.save_architecture` is set but `backend` (the backend of the trace's model) cannot save
    architectures.

    Raises:
        ValueError: Naming the trace and the backend.
    """
    if getattr(trace, "save_architecture", False) and backend is not None and not can_save_architecture(backend):
        raise ValueError(f"{type(trace).__name__} was asked to save_architecture, but the {backend.name!r} backend "
                         f"cannot save model architectures (only TensorFlow models can); use save_architecture=False")


def _model_saver_freq(frequency: Union[int, str]) -> Freq:
    if isinstance(frequency, numbers.Integral) and not isinstance(frequency, bool):
        if frequency < 1:
            raise ValueError(f"ModelSaver frequency must be a positive number of epochs, got {frequency}")
        return Freq(is_step=False, freq=int(frequency))  # FastEstimator: an integer frequency counts epochs
    if not isinstance(frequency, str):
        raise ValueError(f"ModelSaver frequency must be a positive int (epochs) or a string like 'epoch', '2e' or "
                         f"'500s', got {frequency!r}")
    freq = parse_freq(frequency)
    if freq.freq < 1:
        raise ValueError(f"ModelSaver frequency must be positive, got {frequency!r}")
    return freq


@fe_export("fe.trace.io.model_saver.ModelSaver", "fe.trace.io.ModelSaver")
class ModelSaver(Trace):
    """Save a model's weights during training, every `frequency` epochs (or steps).

    Files are named `<model_name>_epoch_<epoch>.<ext>` (or `<model_name>_step_<step>.<ext>` for a step frequency) in
    `save_dir`, where `<ext>` is FastEstimator's: 'pt' for torch, 'h5' for TensorFlow (Keras 3's weights format under
    that name; `fe.backend.load_model` and `fe.build(weights_path=...)` read it). Each model is saved through its own
    framework, whatever the Network's framework is. Each file is written atomically, then `FastEstimator-ModelSaver: Saved model to <path>` is printed. With `max_to_keep`, the
    oldest files this trace saved are deleted once there are more than `max_to_keep`, printing
    `FastEstimator-ModelSaver: Removed model <path> due to file number exceeding max_to_keep`. The list of saved files
    (`saved_files`) is a plain attribute, saved with a checkpoint, so a resumed run goes on deleting the right files.

    Args:
        model: A model built with `build`.
        save_dir: The folder to save into (created if needed); None saves nothing.
        frequency: How often to save: a positive integer counts epochs (as in FastEstimator); a string may say
            'epoch', 'step', '<n>e' (every n epochs) or '<n>s' (every n training steps).
        max_to_keep: How many of the latest saves to keep; None or 0 keeps all.
        weights_name: The prefix used for saving model weights (`<weights_name>_epoch_<epoch>.<ext>`). If None
            model.model_name will be used as a prefix.
        save_architecture: Also save the whole model, architecture included (TensorFlow: `<file stem>.keras`, which
            `keras.models.load_model` reads without the model's code). Only TensorFlow models can.

    Raises:
        ValueError: If `frequency` is not a positive integer or a recognised frequency string, `max_to_keep` is
            negative, or `save_architecture` is used with a model whose framework cannot save architectures (torch).

    Example:
        >>> # ModelSaver(model, save_dir="/tmp/ckpt", frequency=2, max_to_keep=3)  # model_epoch_2.pt, _4, _6, ...
        >>> # ModelSaver(model, save_dir="/tmp/ckpt", frequency="500s")            # model_step_500.pt, ...
    """

    def __init__(self,
                 model: Any,
                 save_dir: Optional[str],
                 frequency: Union[int, str] = 1,
                 max_to_keep: Optional[int] = None,
                 weights_name: Optional[str] = None,
                 save_architecture: bool = False) -> None:
        if weights_name is not None and (not isinstance(weights_name, str) or not weights_name or
                                         os.path.basename(weights_name) != weights_name):
            raise ValueError(f"ModelSaver weights_name must be a plain file name prefix, got {weights_name!r}")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int)
                                        or max_to_keep < 0):
            raise ValueError(f"ModelSaver max_to_keep must be None or a non-negative integer, got {max_to_keep!r}")
        freq = _model_saver_freq(frequency)
        super().__init__(mode="train")
        self.save_architecture = save_architecture
        check_architecture_saving(self, backend_for_model(model) if save_architecture else None)
        self.model = model
        self.save_dir = save_dir
        self.frequency = frequency
        self.per_step = freq.is_step
        self.every = freq.freq
        self.max_to_keep = max_to_keep or 0
        self.weights_name = weights_name
        self.save_architecture = save_architecture
        self.saved_files: List[List[str]] = []  # the paths of each save, oldest first

    def _prefix(self) -> str:
        return self.weights_name or model_name_of(self.model)

    def _own_name(self) -> "re.Pattern[str]":
        stem = re.escape(self._prefix())
        return re.compile(rf"{stem}_(epoch|step)_\d+(\.[A-Za-z0-9_.]+)?")

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: the names (not paths) of the files saved so far, oldest first."""
        return {"saved_files": [[os.path.basename(path) for path in files] for files in self.saved_files]}

    def check_state(self, state: Dict[str, Any]) -> None:
        """Raise ValueError unless `state` names only files this saver writes (called before anything is restored)."""
        saved = state.get("saved_files", [])
        pattern = self._own_name()
        if not isinstance(saved, list) or not all(
                isinstance(files, list) and all(own_file_name(name, pattern) for name in files) for files in saved):
            raise ValueError(f"ModelSaver: the checkpoint's saved_files {saved!r} are not names of files this saver "
                             f"writes ({pattern.pattern}) in {self.save_dir!r}")

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output: files this saver wrote into its own `save_dir` (the script's)."""
        self.check_state(state)
        self.saved_files = [[os.path.join(self.save_dir, name) for name in files] for files in state["saved_files"]]

    def on_begin(self, data: Data) -> None:
        check_architecture_saving(self, model_backend(self.model) if self.save_architecture else None)

    def on_batch_end(self, data: Data) -> None:
        if self.per_step and self.system.global_step % self.every == 0:
            self._save(f"{self._prefix()}_step_{self.system.global_step}")

    def on_epoch_end(self, data: Data) -> None:
        if not self.per_step and self.system.epoch_idx % self.every == 0:
            self._save(f"{self._prefix()}_epoch_{self.system.epoch_idx}")

    def _save(self, file_stem: str) -> None:
        if not self.save_dir:
            return
        paths = save_model_files(model_backend(self.model), self.model, self.save_dir, file_stem,
                                 save_architecture=self.save_architecture)
        if not paths:  # another rank of a data-parallel run: it joined the gather; rank 0 wrote, prints and keeps
            return
        print(f"FastEstimator-ModelSaver: Saved model to {paths[0]}")
        # a file saved again under the same name (a second fit) is the newest now, not a second entry
        self.saved_files = [files for files in self.saved_files if files[0] != paths[0]]
        self.saved_files.append(paths)
        while self.max_to_keep and len(self.saved_files) > self.max_to_keep:
            old = self.saved_files.pop(0)
            remove_model_files(old, inside=self.save_dir)
            print(f"FastEstimator-ModelSaver: Removed model {old[0]} due to file number exceeding max_to_keep")
