"""Saving and loading torch models: `<name>.pt` (weights) and `<name>_opt.pt` (optimizer state).

`<name>.pt` is the model's `state_dict()`. `<name>_opt.pt` is a dict:

    {"format": "fe_torch.optimizer", "version": 1,
     "optimizers": [state_dict, ...],        # every scheduled optimizer of the model, in schedule order
     "scalers": [GradScaler state or None, ...],
     "current": index of the current optimizer in "optimizers" (-1: none),
     "accumulation": [{"count": int, "grads": [tensor or None, ...] or None}, ...]}  # per UpdateOp (merge_grad)

Everything is read back with `torch.load(weights_only=True, map_location=<the model's device>)`, so loading runs no
code from the file and a GPU-trained model loads on a CPU-only machine. A plain optimizer `state_dict` file (as
FastEstimator writes it) is accepted too. Files are written atomically (temporary sibling, fsync, rename) and hashed
while torch writes them: `save_model` returns `WrittenFile`s whose sha256 is that of the bytes torch serialized, so a
checkpoint's manifest detects damage done to a file after its write.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import torch
from fe_core.checkpoint.hashed_file import WrittenFile, write_hashed_file

from fe_torch.devices import model_device
from fe_torch.optimizers import scheduled_optimizers
from fe_torch.precision import grad_scaler_of

__all__ = ["save_model", "load_model", "load_weights", "weights_file_name", "optimizer_file_name"]

_FORMAT = "fe_torch.optimizer"
_VERSION = 1


def weights_file_name(model_name: str) -> str:
    """The file holding a model's weights: `<name>.pt`."""
    return f"{model_name}.pt"


def optimizer_file_name(model_name: str) -> str:
    """The file holding a model's optimizer state: `<name>_opt.pt`."""
    return f"{model_name}_opt.pt"


def _atomic_save(obj: Any, path: str) -> WrittenFile:
    """torch.save `obj` to `path` atomically; the result carries the size and sha256 of the bytes torch wrote."""
    return write_hashed_file(path, lambda file: torch.save(obj, file))


def _load(path: str, device: torch.device, what: str, model_name: str) -> Any:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Cannot load the {what} of torch model {model_name!r}: {path!r} does not exist")
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as error:  # pylint: disable=broad-except  (torch raises OSError, RuntimeError, pickle errors...)
        raise ValueError(f"Cannot load the {what} of torch model {model_name!r} from {path!r}: the file is damaged "
                         f"or not a weights-only torch file ({type(error).__name__}: {error})") from error


def _accumulation_states(model: Any) -> List[Dict[str, Any]]:
    return list(getattr(model, "fe_update_states", None) or [])


def _restore_current_optimizer(model: Any, optimizers: List[Any], payload: Dict[str, Any]) -> None:
    """Make the optimizer a saved payload names current (`payload['current']`, an index) the model's current one."""
    current = payload.get("current", -1)
    if isinstance(current, int) and 0 <= current < len(optimizers):
        model.current_optimizer = optimizers[current]


def save_model(model: torch.nn.Module, save_dir: str, save_optimizer: bool = False) -> List[str]:
    """Write `<name>.pt` (and with `save_optimizer`, `<name>_opt.pt`) into `save_dir`.

    Args:
        model: A model built with `build`.
        save_dir: The directory (created if missing).
        save_optimizer: Also save the state of every optimizer of the model, their GradScalers and pending
            gradient accumulation.

    Returns:
        The names of the files written, relative to `save_dir`, as `WrittenFile`s: each carries the size and sha256
        of the bytes torch serialized (hashed while writing), which checkpoints record in their manifest.

    Raises:
        ValueError: If `save_optimizer` is set but the model has no optimizer.
    """
    name = str(model.model_name)
    os.makedirs(save_dir, exist_ok=True)
    if _sharded(model):  # `fe.backend.save_model` of a sharded model: whole weights, gathered, written by rank 0
        if save_optimizer:
            raise ValueError(f"Cannot save the optimizer of sharded torch model {name!r} into one file: its state "
                             f"is sharded across the processes (RestoreWizard checkpoints it, each process its part)")
        return [save_weights(model, os.path.join(save_dir, weights_file_name(name)))]
    files: List[str] = [_atomic_save(model.state_dict(), os.path.join(save_dir, weights_file_name(name))
                                     ).renamed(weights_file_name(name))]
    if save_optimizer:
        optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
        if not optimizers:
            raise ValueError(f"Cannot save the optimizer of torch model {name!r}: it has none")
        current = getattr(model, "current_optimizer", None)
        payload = {
            "format": _FORMAT,
            "version": _VERSION,
            "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "scalers": [_scaler_state(optimizer) for optimizer in optimizers],
            "current": next((index for index, optimizer in enumerate(optimizers) if optimizer is current), -1),
            "accumulation": [{"count": int(state.get("count", 0)), "grads": state.get("grads")}
                             for state in _accumulation_states(model)],
        }
        files.append(_atomic_save(payload, os.path.join(save_dir, optimizer_file_name(name))
                                  ).renamed(optimizer_file_name(name)))
    return files


def _scaler_state(optimizer: torch.optim.Optimizer) -> Optional[Dict[str, Any]]:
    scaler = grad_scaler_of(optimizer)
    return scaler.state_dict() if scaler is not None else None


def save_weights(model: torch.nn.Module, path: str) -> str:
    """Write the model's `state_dict` alone to `path` (atomically); return `path`.

    A sharded model's whole weights are gathered (a collective: every process calls this) onto rank 0's CPU, and
    rank 0 writes the ordinary file that an unsharded model loads.
    """
    if _sharded(model):
        from fe_torch.sharded_checkpoint import full_state_dict  # pylint: disable=import-outside-toplevel
        state = full_state_dict(model)
        if state:  # rank 0: the gathered weights are here
            _atomic_save(state, path)
        _barrier()  # the file is complete before any process goes on (and may read it)
        return path
    _atomic_save(model.state_dict(), path)
    return path


def _barrier() -> None:
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _sharded(model: Any) -> bool:
    return isinstance(model, torch.nn.Module) and model.__dict__.get("fe_sharding") is not None


def load_weights(model: torch.nn.Module, path: str) -> None:
    """Load a `state_dict` file into `model` (mapped to the model's device).

    Raises:
        FileNotFoundError: If `path` does not exist.
        ValueError: If the file is not a state dict or does not fit the model.
    """
    name = str(getattr(model, "model_name", type(model).__name__))
    if _sharded(model):  # rank 0 reads the file; every other process receives its slices
        from fe_torch.sharded_checkpoint import load_full_weights  # pylint: disable=import-outside-toplevel
        load_full_weights(model, lambda: _weights_dict(_load(path, torch.device("cpu"), "weights", name), path, name),
                          repr(path))
        return
    state = _load(path, model_device(model), "weights", name)
    if not isinstance(state, dict):
        raise ValueError(f"{path!r} does not hold a state_dict for torch model {name!r} (found "
                         f"{type(state).__name__})")
    try:
        if _sharded(model):  # every process reads the whole file and keeps its slices
            from fe_torch.sharded_checkpoint import load_full_state_dict  # pylint: disable=import-outside-toplevel
            load_full_state_dict(model, state)
        else:
            model.load_state_dict(state)
    except (RuntimeError, KeyError) as error:
        raise ValueError(f"The weights in {path!r} do not fit torch model {name!r}: {error}") from None


def _weights_dict(state: Any, path: str, name: str) -> Dict[str, Any]:
    if not isinstance(state, dict):
        raise ValueError(f"{path!r} does not hold a state_dict for torch model {name!r} (found "
                         f"{type(state).__name__})")
    return state


def load_model(model: torch.nn.Module, load_dir: str, load_optimizer: bool = False) -> None:
    """Read back what `save_model` wrote into `load_dir`.

    Raises:
        FileNotFoundError: If a file is missing.
        ValueError: If a file does not fit the model or its optimizers.
    """
    name = str(model.model_name)
    load_weights(model, os.path.join(load_dir, weights_file_name(name)))
    if not load_optimizer:
        return
    path = os.path.join(load_dir, optimizer_file_name(name))
    payload = _load(path, model_device(model), "optimizer state", name)
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
    if not optimizers:
        raise ValueError(f"Cannot load {path!r}: torch model {name!r} has no optimizer")
    if isinstance(payload, dict) and "state" in payload and "param_groups" in payload:  # a plain state_dict
        current = getattr(model, "current_optimizer", None) or optimizers[0]
        current.load_state_dict(payload)
        return
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise ValueError(f"{path!r} is not an fe_torch optimizer file for model {name!r}")
    saved = payload["optimizers"]
    if len(saved) != len(optimizers):
        raise ValueError(f"{path!r} holds {len(saved)} optimizer state(s), but torch model {name!r} has "
                         f"{len(optimizers)} optimizer(s)")
    for index, (optimizer, state) in enumerate(zip(optimizers, saved)):
        try:
            optimizer.load_state_dict(state)
        except (ValueError, KeyError) as error:
            raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r}: "
                             f"{error}") from None
        scaler, scaler_state = grad_scaler_of(optimizer), payload["scalers"][index]
        if scaler is not None and scaler_state is not None:  # a CUDA scaler is meaningless on a CPU-only machine
            scaler.load_state_dict(scaler_state)
    _restore_current_optimizer(model, optimizers, payload)
    accumulation = payload.get("accumulation") or []
    states = _accumulation_states(model)
    if len(accumulation) == len(states):
        for state, saved_state in zip(states, accumulation):
            state.pop("params", None)
            state["count"] = int(saved_state["count"])
            state["grads"] = saved_state["grads"]
