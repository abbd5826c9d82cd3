"""Saving and loading torch models: the one place that asks whether a model is sharded and picks the way.

fe-torch's checkpoint code is layered, imports running one way:

    model_state         the format: file names, safe reading, the optimizer payload
    whole_weights       a sharded model's whole weights gathered onto rank 0, or sent from it into the slices
    single_file         `<name>.pt` (the `state_dict`) and `<name>_opt.pt` (every optimizer, GradScaler, accumulation)
    sharded_checkpoint  `<name>.dcp/`: torch's distributed checkpoint, each process writing and reading its slices
    checkpoint (this)   the public functions; `fe_torch.sharding.is_sharded` is asked here and nowhere else

Whole-weights files (`save_model`, `save_weights`, `load_weights`, `load_model`: `fe.backend.save_model`, ModelSaver,
`build(weights_path=...)`) are ordinary single files whichever model wrote them: a sharded model's are gathered onto
rank 0, which writes them, and read by rank 0 alone when loaded (each process keeps its slices). In a checkpoint
directory (`System.save_state`, RestoreWizard) a sharded model is a distributed checkpoint instead
(`save_checkpoint_files`, `load_checkpoint_files`), and either kind of checkpoint loads into either kind of model.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from fe_torch import sharded_checkpoint, single_file
from fe_torch.model_state import optimizer_file_name, weights_file_name
from fe_torch.sharding import is_sharded
from fe_torch.whole_weights import barrier, gather_weights

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "weights_file_name", "optimizer_file_name",
           "save_checkpoint_files", "load_checkpoint_files", "check_checkpoint_files", "stage_checkpoint",
           "join_save_weights", "reshards", "verified_when_read"]


# ------------------------------------------------------------------------------------------------ whole-weights files
def save_model(model: torch.nn.Module, save_dir: str, save_optimizer: bool = False) -> List[str]:
    """Write `<name>.pt` (and with `save_optimizer`, `<name>_opt.pt`) into `save_dir`.

    A sharded model's whole weights are gathered (a collective: every process calls this) and written by rank 0.

    Args:
        model: A model built with `build`.
        save_dir: The directory (created if missing).
        save_optimizer: Also save the state of every optimizer of the model, their GradScalers and pending
            gradient accumulation.

    Returns:
        The names of the files written, relative to `save_dir`; an ordinary model's are `WrittenFile`s, carrying
        the size and sha256 of the bytes torch serialized (hashed while writing).

    Raises:
        ValueError: If `save_optimizer` is set but the model has no optimizer, or the model is sharded.
    """
    name = str(model.model_name)
    os.makedirs(save_dir, exist_ok=True)
    if is_sharded(model):
        if save_optimizer:
            raise ValueError(f"Cannot save the optimizer of sharded torch model {name!r} into one file: its state "
                             f"is sharded across the processes (RestoreWizard checkpoints it, each process its part)")
        single_file.save_gathered_weights(model, os.path.join(save_dir, weights_file_name(name)))
        return [weights_file_name(name)]
    return single_file.save_files(model, save_dir, save_optimizer)


def save_weights(model: torch.nn.Module, path: str) -> str:
    """Write the model's whole `state_dict` alone to `path` (atomically); return `path`.

    A sharded model's weights are gathered (a collective: every process calls this) onto rank 0's CPU, and rank 0
    writes the ordinary file that an unsharded model loads.
    """
    if is_sharded(model):
        return single_file.save_gathered_weights(model, path)
    return single_file.save_weights_file(model, path)


def join_save_weights(model: Any) -> None:
    """On the processes that do not write a whole-weights file: take part in gathering a sharded model's weights
    (a collective) while rank 0 writes them (`save_weights`)."""
    if is_sharded(model):
        gather_weights(model)
        barrier()  # rank 0 has written the file


def load_weights(model: torch.nn.Module, path: str,
                 transform: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None) -> None:
    """Load a `state_dict` file into `model` (an ordinary model: mapped to its device; a sharded one: rank 0 reads
    the file and every process receives its slices).

    Args:
        model: The model.
        path: The file.
        transform: Applied to the state dict read (e.g. dropping DDP's 'module.' prefixes) before loading it.

    Raises:
        FileNotFoundError: If `path` does not exist.
        ValueError: If the file is not a state dict or does not fit the model (on every process alike).
    """
    if is_sharded(model):
        single_file.load_broadcast_weights(model, path, transform)
    else:
        single_file.load_weights_file(model, path, transform)


def load_model(model: torch.nn.Module, load_dir: str, load_optimizer: bool = False) -> None:
    """Read back what `save_model` wrote into `load_dir` (`<name>.pt`, `<name>_opt.pt`), into an ordinary or a
    sharded model.

    Raises:
        FileNotFoundError: If a file is missing.
        ValueError: If a file does not fit the model or its optimizers.
    """
    if is_sharded(model):
        single_file.load_files_into_sharded(model, load_dir, load_optimizer)
    else:
        single_file.load_files(model, load_dir, load_optimizer)


# ------------------------------------------------------------------------------------------------ checkpoint folders
def stage_checkpoint(models: Sequence[Any], save_dir: str) -> None:
    """Before a checkpoint is written (every process, at the same point): each process writes its slices of the
    sharded models (see `sharded_checkpoint.stage_models`)."""
    sharded_checkpoint.stage_models(list(models), save_dir, [is_sharded(model) for model in models])


def save_checkpoint_files(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> List[str]:
    """A model's files in a checkpoint being written into `save_dir`: its distributed checkpoint if it is sharded
    (staged by every process), else its single files."""
    if is_sharded(model):
        return sharded_checkpoint.save_checkpoint_files(model, save_dir, save_optimizer)
    return single_file.save_files(model, save_dir, save_optimizer)


def verified_when_read(name: str) -> bool:
    """Whether a checkpoint file is verified by the processes that read it (`check_checkpoint_files`) rather than by
    every process before the checkpoint is decoded: the slice files of distributed checkpoints."""
    return sharded_checkpoint.is_slice_file(name)


def check_checkpoint_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool,
                           digests: Optional[Dict[str, Dict[str, Any]]] = None, unverified: Sequence[str] = ()
                           ) -> None:
    """Before a checkpoint is restored, without changing anything: whether the model's files in `load_dir` fit it,
    and the files among `unverified` that this process will read match their manifest `digests`. A collective for a
    sharded model (every process refuses alike).

    Raises:
        FileNotFoundError, ValueError: If they do not fit, are missing or damaged.
    """
    sharded = is_sharded(model)
    if sharded_checkpoint.check_checkpoint_files(model, load_dir, load_optimizer, sharded, digests, unverified):
        return
    if sharded:
        single_file.check_files_for_sharded(model, load_dir, load_optimizer)
    else:
        single_file.check_files(model, load_dir, load_optimizer)


def load_checkpoint_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """Load a model from a checkpoint folder, whichever kind wrote it: a distributed checkpoint (resharded into this
    run's processes, or into an ordinary model), or single files (into an ordinary or a sharded model)."""
    if not sharded_checkpoint.load_checkpoint_files(model, load_dir, load_optimizer):
        load_model(model, load_dir, load_optimizer)


def reshards(models: Sequence[Any], saved_files: Sequence[str]) -> bool:
    """Whether a checkpoint written by a different number of processes can still resume these models: yes when a
    model is sharded now or was sharded then (`saved_files`: the checkpoint's model files; torch's distributed
    checkpoint reshards them exactly)."""
    return any(is_sharded(model) for model in models) or any(
        str(name).split("/", 1)[0].endswith(".dcp") for name in saved_files)
