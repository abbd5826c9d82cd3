"""Single-file checkpoints of torch models: `<name>.pt` (weights) and `<name>_opt.pt` (optimizer state).

Everything is read back with `torch.load(weights_only=True, map_location=<the model's device>)`, so loading runs no
code from the file and a GPU-trained model loads on a CPU-only machine. A plain optimizer `state_dict` file (as
FastEstimator writes it) is accepted too. Files are written atomically (temporary sibling, fsync, rename) and hashed
while torch writes them: the writers return `WrittenFile`s whose sha256 is that of the bytes torch serialized, so a
checkpoint's manifest detects damage done to a file after its write.

The functions come in two kinds, and `fe_torch.checkpoint` chooses between them: for an ordinary model (`save_files`,
`load_files`, `load_weights_file`, `check_files`), and for a sharded model, whose whole weights are gathered onto rank
0 to be written or read by rank 0 and sent into every process's slices (`save_gathered_weights`,
`load_broadcast_weights`, `load_files_into_sharded`, `check_files_for_sharded`).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

import torch
from fe_core.checkpoint.hashed_file import WrittenFile, write_hashed_file

from fe_torch.devices import model_device
from fe_torch.model_state import (check_optimizer_payload, misfit, optimizer_file_name, optimizer_payload,
                                  read_torch_file, restore_accumulation, restore_current_optimizer, restore_scaler,
                                  weights_dict, weights_file_name)
from fe_torch.whole_weights import agree, barrier, broadcast_weights, gather_weights, load_whole_optimizers, rank

__all__ = ["write_torch_file", "save_files", "save_weights_file", "load_weights_file", "load_files", "check_files",
           "save_gathered_weights", "load_broadcast_weights", "load_files_into_sharded", "check_files_for_sharded"]


def write_torch_file(obj: Any, path: str) -> WrittenFile:
    """torch.save `obj` to `path` atomically; the result carries the size and sha256 of the bytes torch wrote."""
    return write_hashed_file(path, lambda file: torch.save(obj, file))


# ------------------------------------------------------------------------------------------------ ordinary models
def save_files(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> List[str]:
    """Write `<name>.pt` (and `<name>_opt.pt`) of an ordinary model; return the `WrittenFile`s (relative names)."""
    name = str(model.model_name)
    os.makedirs(save_dir, exist_ok=True)
    payload = optimizer_payload(model) if save_optimizer else None  # no optimizer: fail before writing anything
    files: List[str] = [write_torch_file(model.state_dict(), os.path.join(save_dir, weights_file_name(name))
                                         ).renamed(weights_file_name(name))]
    if payload is not None:
        files.append(write_torch_file(payload, os.path.join(save_dir, optimizer_file_name(name))
                                      ).renamed(optimizer_file_name(name)))
    return files


def save_weights_file(model: torch.nn.Module, path: str) -> str:
    """Write an ordinary model's `state_dict` alone to `path` (atomically); return `path`."""
    write_torch_file(model.state_dict(), path)
    return path


Transform = Optional[Callable[[Dict[str, Any]], Dict[str, Any]]]


def load_weights_file(model: torch.nn.Module, path: str, transform: Transform = None) -> None:
    """Load a `state_dict` file into an ordinary model (mapped to the model's device); `transform` is applied to
    the state dict read first.

    Raises:
        FileNotFoundError: If `path` does not exist.
        ValueError: If the file is not a state dict or does not fit the model.
    """
    name = str(getattr(model, "model_name", type(model).__name__))
    state = weights_dict(read_torch_file(path, model_device(model), "weights", name), path, name)
    if transform is not None:
        state = transform(state)
    try:
        model.load_state_dict(state)
    except (RuntimeError, KeyError) as error:
        raise ValueError(f"The weights in {path!r} do not fit torch model {name!r}: {error}") from None


def load_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """Read back what `save_files` wrote into `load_dir`.

    Raises:
        FileNotFoundError: If a file is missing.
        ValueError: If a file does not fit the model or its optimizers.
    """
    name = str(model.model_name)
    load_weights_file(model, os.path.join(load_dir, weights_file_name(name)))
    if not load_optimizer:
        return
    path = os.path.join(load_dir, optimizer_file_name(name))
    payload = read_torch_file(path, model_device(model), "optimizer state", name)
    targets = check_optimizer_payload(model, payload, path)
    saved = [payload] if payload.get("format") is None else payload["optimizers"]
    for index, (optimizer, state) in enumerate(zip(targets, saved)):
        try:
            optimizer.load_state_dict(state)
        except (ValueError, KeyError) as error:
            raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r}: "
                             f"{error}") from None
    if payload.get("format") is None:  # a plain state_dict: the current optimizer's, nothing else
        return
    for optimizer, scaler in zip(targets, payload["scalers"]):
        restore_scaler(optimizer, scaler)
    restore_current_optimizer(model, targets, payload)
    restore_accumulation(model, payload.get("accumulation") or [], lambda position, state: state["grads"])


def check_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """Whether `load_files` would succeed, without changing the model: the files are read (memory-mapped where
    torch can) and their keys, shapes and optimizer groups compared with the model's.

    Raises:
        FileNotFoundError, ValueError: As `load_files` would.
    """
    name = str(model.model_name)
    path = os.path.join(load_dir, weights_file_name(name))
    state = weights_dict(read_torch_file(path, "cpu", "weights", name, mmap=True), path, name)
    problem = misfit(model, state)
    if problem is not None:
        raise ValueError(f"The weights in {path!r} do not fit torch model {name!r}: {problem}")
    if load_optimizer:
        path = os.path.join(load_dir, optimizer_file_name(name))
        check_optimizer_payload(model, read_torch_file(path, "cpu", "optimizer state", name, mmap=True), path)


# ------------------------------------------------------------------------------------------------ sharded models
def _read_whole(path: str, name: str, transform: Transform = None) -> Dict[str, Any]:
    state = weights_dict(read_torch_file(path, torch.device("cpu"), "weights", name), path, name)
    return transform(state) if transform is not None else state


def save_gathered_weights(model: torch.nn.Module, path: str) -> str:
    """A sharded model's whole weights, gathered onto rank 0's CPU (a collective: every process calls this), written
    by rank 0 as the ordinary file an unsharded model loads; return `path`."""
    state = gather_weights(model)
    if state:  # rank 0: the gathered weights are here
        write_torch_file(state, path)
    barrier()  # the file is complete before any process goes on (and may read it)
    return path


def load_broadcast_weights(model: torch.nn.Module, path: str, transform: Transform = None) -> None:
    """Whole weights from an ordinary file into a sharded model: rank 0 reads it (then `transform`), every process
    keeps its slices."""
    name = str(getattr(model, "model_name", type(model).__name__))
    broadcast_weights(model, lambda: _read_whole(path, name, transform), repr(path))


def load_files_into_sharded(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """A checkpoint of an ordinary model (one process: `<name>.pt`, `<name>_opt.pt`) into a sharded model."""
    name = str(model.model_name)
    load_broadcast_weights(model, os.path.join(load_dir, weights_file_name(name)))
    if not load_optimizer:
        return
    path = os.path.join(load_dir, optimizer_file_name(name))
    payload = torch.load(path, map_location="cpu", weights_only=True) if os.path.isfile(path) else None
    if not isinstance(payload, dict) or payload.get("format") is None:
        raise ValueError(f"{path!r} is missing or not an fe_torch optimizer file for model {name!r}")
    load_whole_optimizers(model, check_optimizer_payload(model, payload, path), payload)


def check_files_for_sharded(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """Whether `load_files_into_sharded` would succeed, without changing the model; a collective (every process
    fails alike).

    Raises:
        ValueError: If a file is missing or does not fit the model.
    """
    failure = None
    try:
        if rank() == 0:
            check_files(model, load_dir, load_optimizer)
    except Exception as error:  # pylint: disable=broad-except  (every process raises, in agree)
        failure = error
    agree(failure, f"load torch model {str(model.model_name)!r} from {load_dir!r}")
