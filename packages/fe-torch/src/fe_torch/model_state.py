"""The state of a torch model in fe's files, whatever holds it: names, safe reading, and the optimizer payload.

The bottom layer of fe-torch's checkpoints (imports run one way):

    model_state (this: the format)  ->  whole_weights (gather to rank 0 / broadcast into slices)
    ->  single_file (`<name>.pt`, `<name>_opt.pt`)  ->  sharded_checkpoint (`<name>.dcp/`)
    ->  checkpoint (the public functions: the one place that asks `is_sharded` and dispatches)

`<name>.pt` is the model's `state_dict()`. `<name>_opt.pt` is a dict:

    {"format": "fe_torch.optimizer", "version": 1,
     "optimizers": [state_dict, ...],        # every scheduled optimizer of the model, in schedule order
     "scalers": [GradScaler state or None, ...],
     "current": index of the current optimizer in "optimizers" (-1: none),
     "accumulation": [{"count": int, "grads": [tensor or None, ...] or None}, ...]}  # per UpdateOp (merge_grad)

An optimizer that has not stepped yet has no per-parameter state; it is saved as such (`"state": {}`) and restoring it
restores its hyper-parameters and nothing else, so a checkpoint taken before an optimizer's first step never changes
what that step does (torch's distributed `get_optimizer_state_dict` would run a step with lr 0 to create the state,
and Adam's first real step would then be its second).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from fe_torch.optimizers import scheduled_optimizers
from fe_torch.precision import grad_scaler_of

__all__ = ["OPTIMIZER_FORMAT", "OPTIMIZER_VERSION", "weights_file_name", "optimizer_file_name", "read_torch_file",
           "weights_dict", "misfit", "trainable", "optimizers_of", "accumulation_states", "current_index",
           "restore_current_optimizer", "scaler_state", "restore_scaler", "has_state", "restore_hyperparameters",
           "optimizer_payload", "check_optimizer_payload", "restore_accumulation"]

OPTIMIZER_FORMAT = "fe_torch.optimizer"
OPTIMIZER_VERSION = 1


def weights_file_name(model_name: str) -> str:
    """The file holding a model's weights: `<name>.pt`."""
    return f"{model_name}.pt"


def optimizer_file_name(model_name: str) -> str:
    """The file holding a model's optimizer state: `<name>_opt.pt`."""
    return f"{model_name}_opt.pt"


def read_torch_file(path: str, device: Any, what: str, model_name: str, mmap: bool = False) -> Any:
    """`torch.load(weights_only=True)` of a file fe wrote, with errors that name the model and the file.

    Raises:
        FileNotFoundError: If `path` does not exist.
        ValueError: If it is damaged or not a weights-only torch file.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Cannot load the {what} of torch model {model_name!r}: {path!r} does not exist")
    try:
        return torch.load(path, map_location=device, weights_only=True, mmap=mmap)
    except Exception as error:  # pylint: disable=broad-except  (torch raises OSError, RuntimeError, pickle errors...)
        if mmap:  # a file torch cannot map (an old format): read it
            return read_torch_file(path, device, what, model_name)
        raise ValueError(f"Cannot load the {what} of torch model {model_name!r} from {path!r}: the file is damaged "
                         f"or not a weights-only torch file ({type(error).__name__}: {error})") from error


def weights_dict(state: Any, path: str, model_name: str) -> Dict[str, Any]:
    """`state` if it is a state dict.

    Raises:
        ValueError: If it is not a dict.
    """
    if not isinstance(state, dict):
        raise ValueError(f"{path!r} does not hold a state_dict for torch model {model_name!r} (found "
                         f"{type(state).__name__})")
    return state


def misfit(model: torch.nn.Module, state: Dict[str, Any]) -> Optional[str]:
    """What keeps whole weights `state` from fitting `model` (its global shapes: a sharded model's whole
    parameters), or None when they fit."""
    expected = {key: tuple(value.shape) if isinstance(value, torch.Tensor) else None
                for key, value in model.state_dict().items()}  # None: a module's extra state
    found = {key: tuple(value.shape) if isinstance(value, torch.Tensor) else None for key, value in state.items()}
    if found == expected:
        return None
    missing = sorted(set(expected) - set(found))[:3]
    unexpected = sorted(set(found) - set(expected))[:3]
    shapes = sorted(key for key in set(found) & set(expected) if found[key] != expected[key])[:3]
    return f"missing {missing}, unexpected {unexpected}, other shapes {shapes}"


def trainable(model: torch.nn.Module) -> List[torch.nn.Parameter]:
    """The parameters that require gradients, in `model.parameters()` order (the order of accumulated gradients)."""
    return [parameter for parameter in model.parameters() if parameter.requires_grad]


def optimizers_of(model: Any) -> List[torch.optim.Optimizer]:
    """Every scheduled optimizer of a model built by `build`, in schedule order."""
    return scheduled_optimizers(getattr(model, "optimizer", None))


def accumulation_states(model: Any) -> List[Dict[str, Any]]:
    """The gradient-accumulation states of the model's UpdateOps (`merge_grad`), in op order."""
    return list(getattr(model, "fe_update_states", None) or [])


def current_index(model: Any, optimizers: Sequence[torch.optim.Optimizer]) -> int:
    """The position of the model's current optimizer among `optimizers` (-1: none)."""
    current = getattr(model, "current_optimizer", None)
    return next((index for index, optimizer in enumerate(optimizers) if optimizer is current), -1)


def restore_current_optimizer(model: Any, optimizers: List[Any], payload: Dict[str, Any]) -> None:
    """Make the optimizer a saved payload names current (`payload['current']`, an index) the model's current one."""
    current = payload.get("current", -1)
    if isinstance(current, int) and 0 <= current < len(optimizers):
        model.current_optimizer = optimizers[current]


def scaler_state(optimizer: torch.optim.Optimizer) -> Optional[Dict[str, Any]]:
    """The state of the optimizer's GradScaler (None without one)."""
    scaler = grad_scaler_of(optimizer)
    return scaler.state_dict() if scaler is not None else None


def restore_scaler(optimizer: torch.optim.Optimizer, state: Optional[Dict[str, Any]]) -> None:
    """Restore a GradScaler state (a CUDA scaler's state is meaningless on a CPU-only machine: skipped there)."""
    scaler = grad_scaler_of(optimizer)
    if scaler is not None and state is not None:
        scaler.load_state_dict(state)


def has_state(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the optimizer holds per-parameter state (it has stepped, or creates its state when it is made)."""
    return bool(optimizer.state)


def restore_hyperparameters(optimizer: torch.optim.Optimizer, groups: Sequence[Dict[str, Any]], where: str) -> None:
    """Restore a saved optimizer that had no per-parameter state: its groups' hyper-parameters, and no state (what it
    held is dropped, as a fresh optimizer's).

    Raises:
        ValueError: If the number of groups or of their parameters differs.
    """
    if len(groups) != len(optimizer.param_groups) or any(
            len(saved.get("params", ())) != len(group["params"]) for saved, group in zip(groups, optimizer.param_groups)):
        raise ValueError(f"{where}: the saved optimizer's parameter groups do not fit the optimizer")
    optimizer.state.clear()
    for group, saved in zip(optimizer.param_groups, groups):
        group.update({key: value for key, value in saved.items() if key != "params"})


def optimizer_payload(model: Any) -> Dict[str, Any]:
    """`<name>_opt.pt`'s content for an unsharded model.

    Raises:
        ValueError: If the model has no optimizer.
    """
    optimizers = optimizers_of(model)
    if not optimizers:
        raise ValueError(f"Cannot save the optimizer of torch model {str(model.model_name)!r}: it has none")
    return {"format": OPTIMIZER_FORMAT, "version": OPTIMIZER_VERSION,
            "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "scalers": [scaler_state(optimizer) for optimizer in optimizers],
            "current": current_index(model, optimizers),
            "accumulation": [{"count": int(state.get("count", 0)), "grads": state.get("grads")}
                             for state in accumulation_states(model)]}


def check_optimizer_payload(model: Any, payload: Any, path: str) -> List[torch.optim.Optimizer]:
    """The model's optimizers, once `payload` (an `<name>_opt.pt`) is known to fit them: the same number, each with
    as many parameter groups of as many parameters. A plain optimizer `state_dict` (as FastEstimator writes it) fits
    the current optimizer.

    Raises:
        ValueError: If it does not fit (nothing has been changed then).
    """
    name = str(model.model_name)
    optimizers = optimizers_of(model)
    if not optimizers:
        raise ValueError(f"Cannot load {path!r}: torch model {name!r} has no optimizer")
    if isinstance(payload, dict) and "state" in payload and "param_groups" in payload:  # a plain state_dict
        saved, targets = [payload], [getattr(model, "current_optimizer", None) or optimizers[0]]
    elif not isinstance(payload, dict) or payload.get("format") != OPTIMIZER_FORMAT:
        raise ValueError(f"{path!r} is not an fe_torch optimizer file for model {name!r}")
    else:
        saved, targets = payload["optimizers"], optimizers
        if len(saved) != len(optimizers):
            raise ValueError(f"{path!r} holds {len(saved)} optimizer state(s), but torch model {name!r} has "
                             f"{len(optimizers)} optimizer(s)")
    for index, (optimizer, state) in enumerate(zip(targets, saved)):
        groups = state.get("param_groups") if isinstance(state, dict) else None
        if not isinstance(groups, list) or len(groups) != len(optimizer.param_groups) or any(
                len(group.get("params", ())) != len(mine["params"]) for group, mine in zip(groups, optimizer.param_groups)):
            raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r}: its parameter "
                             f"groups differ")
    return targets


def restore_accumulation(model: Any, saved: Sequence[Dict[str, Any]],
                         grads_of: Callable[[int, Dict[str, Any]], Optional[List[Any]]]) -> None:
    """Put saved gradient-accumulation states back into the model's UpdateOps (only when there are as many);
    `grads_of(position, saved_state)` gives each one's gradients (in the model's tensors)."""
    states = accumulation_states(model)
    if len(saved) != len(states):
        return
    for position, (state, saved_state) in enumerate(zip(states, saved)):
        state.pop("params", None)
        state["count"] = int(saved_state.get("count", 0))
        state["grads"] = grads_of(position, saved_state)
