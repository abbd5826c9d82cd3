"""Torch model functions behind `fe_core.backend.models`, and the optimizer step shared with the UpdateOp kernel.

`apply_gradients` is the one place a torch optimizer is stepped from gradients (the UpdateOp kernel and
`fe.backend.update_model` both call it): `.grad` is set only for the duration of the step, so gradients computed with
`torch.autograd.grad` never leak into another model's parameters.
"""
from __future__ import annotations

import contextlib
import functools
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import torch

from fe_torch import checkpoint, optimizers
from fe_torch.devices import model_device, to_device

__all__ = ["trainable_parameters", "apply_gradients", "feed_forward", "update_step", "get_lr", "set_lr",
           "save_model", "load_model", "l2_regularization"]


def _name(model: Any) -> str:
    return str(getattr(model, "model_name", type(model).__name__))


def trainable_parameters(model: torch.nn.Module) -> List[torch.nn.Parameter]:
    """The parameters of `model` that require gradients, in `model.parameters()` order."""
    return [parameter for parameter in model.parameters() if parameter.requires_grad]


def apply_gradients(params: Sequence[torch.Tensor], gradients: Sequence[Optional[torch.Tensor]],
                    optimizer: torch.optim.Optimizer, scaler: Any = None) -> None:
    """Step `optimizer` with `gradients` of `params` (through `scaler` when the gradients are loss-scaled)."""
    for parameter, gradient in zip(params, gradients):
        parameter.grad = gradient
    try:
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
    finally:
        for parameter in params:
            parameter.grad = None


def feed_forward(model: torch.nn.Module, x: Sequence[Any], training: bool) -> Any:
    """The torch case of `fe.backend.feed_forward`."""
    if model.training != training:
        model.train(training)
    device = model_device(model)
    if not all(isinstance(value, torch.Tensor) and value.device == device for value in x):
        x = [to_device(value, device) for value in x]  # numpy, or host tensors for a model on the GPU
    return model(*x)


def update_step(model: torch.nn.Module, gradients: Sequence[Optional[torch.Tensor]]) -> Callable[[], None]:
    """A function applying `gradients` (of the trainable parameters, or of every parameter) with the current optimizer.

    Raises:
        ValueError: If the number of gradients matches neither the trainable nor all parameters.
    """
    gradients = [gradients] if isinstance(gradients, torch.Tensor) else list(gradients)
    params = trainable_parameters(model)
    if len(gradients) != len(params):
        every = list(model.parameters())
        if len(gradients) != len(every):
            raise ValueError(f"fe.backend.update_model: got {len(gradients)} gradients, but torch model "
                             f"{_name(model)!r} has {len(params)} trainable parameters ({len(every)} in all)")
        pairs = [(p, g) for p, g in zip(every, gradients) if p.requires_grad]
        params, gradients = [p for p, _ in pairs], [g for _, g in pairs]
    gradients = [None if g is None else g.detach() for g in gradients]
    return functools.partial(apply_gradients, params, gradients, model.current_optimizer, None)


def get_lr(model: torch.nn.Module) -> float:
    """The torch case of `fe.backend.get_lr`."""
    return optimizers.get_lr(model)


def set_lr(model: torch.nn.Module, lr: float, weight_decay: Optional[float]) -> None:
    """The torch case of `fe.backend.set_lr`."""
    optimizers.set_lr(model, lr)
    if weight_decay is not None:
        for group in optimizers.current_optimizer_of(model).param_groups:
            group["weight_decay"] = weight_decay


@contextlib.contextmanager
def _named(model: torch.nn.Module, name: str) -> Iterator[None]:
    """Give the model `name` while fe_torch.checkpoint (which names files after `model.model_name`) runs."""
    had, previous = hasattr(model, "model_name"), getattr(model, "model_name", None)
    model.model_name = name
    try:
        yield
    finally:
        if had:
            model.model_name = previous
        else:
            del model.model_name


def save_model(model: torch.nn.Module, save_dir: str, model_name: str, save_optimizer: bool,
               save_architecture: bool) -> str:
    """The torch case of `fe.backend.save_model`."""
    if save_architecture:
        raise ValueError(f"fe.backend.save_model: save_architecture is only available for TensorFlow models; torch "
                         f"model {model_name!r} can only save its weights")
    os.makedirs(save_dir, exist_ok=True)
    with _named(model, model_name):
        files = checkpoint.save_model(model, save_dir, save_optimizer)
    return os.path.join(save_dir, files[0])


def _strip_data_parallel(state: Dict[str, Any]) -> Dict[str, Any]:
    """A state dict saved from `nn.DataParallel` / DDP has 'module.' in front of every key: drop it."""
    if state and all(isinstance(key, str) and key.startswith("module.") for key in state):
        return {key[len("module."):]: value for key, value in state.items()}
    return state


def load_model(model: torch.nn.Module, weights_path: str, load_optimizer: bool) -> None:
    """The torch case of `fe.backend.load_model`."""
    if not os.path.isfile(weights_path):
        raise FileNotFoundError(f"fe.backend.load_model: weights file {weights_path!r} for torch model "
                                f"{_name(model)!r} does not exist")
    checkpoint.load_weights(model, weights_path, _strip_data_parallel)  # a sharded model: rank 0 reads the file
    if load_optimizer:
        directory, file_name = os.path.split(os.path.abspath(weights_path))
        stem, extension = os.path.splitext(file_name)
        if extension != ".pt":
            raise ValueError(f"fe.backend.load_model: the optimizer is found next to '<name>.pt' weights as "
                             f"'<name>_opt.pt'; {weights_path!r} is not a .pt file")
        with _named(model, stem):
            checkpoint.load_model(model, directory, load_optimizer=True)


def l2_regularization(model: torch.nn.Module, beta: float) -> torch.Tensor:
    """The torch case of `fe.backend.l2_regularization`."""
    params = trainable_parameters(model)
    if not params:
        return torch.zeros((), device=model_device(model))
    return torch.stack([parameter.pow(2).sum() for parameter in params]).sum() * (beta / 2.0)
