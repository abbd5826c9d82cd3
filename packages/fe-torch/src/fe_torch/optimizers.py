"""Turning `build`'s `optimizer_fn` into torch optimizers, and reading/setting their learning rates.

`optimizer_fn` may be one of FastEstimator's optimizer names (with FastEstimator 1.x's learning rates), a function
taking the model's parameters and returning a `torch.optim.Optimizer`, None (a model that is not trained), or an
`EpochScheduler` / `RepeatScheduler` of those, in which case every scheduled optimizer is built once, up front.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

import torch
from fe_core.config_error import ConfigurationTypeError
from fe_core.schedule.scheduler import EpochScheduler, RepeatScheduler, Scheduler

from fe_torch.precision import make_grad_scaler

__all__ = ["DEFAULT_OPTIMIZERS", "build_optimizer", "build_scheduled_optimizer", "scheduled_optimizers",
           "current_optimizer_of", "get_lr", "set_lr"]

# FastEstimator 1.x's torch optimizers by name: torch's classes with FastEstimator's learning rates (torch's own
# defaults, except SGD at 0.01). Written out so a change of torch's defaults does not change fe's.
DEFAULT_OPTIMIZERS: Dict[str, Tuple[Type[torch.optim.Optimizer], float]] = {
    "adadelta": (torch.optim.Adadelta, 1.0),
    "adagrad": (torch.optim.Adagrad, 0.01),
    "adam": (torch.optim.Adam, 0.001),
    "adamax": (torch.optim.Adamax, 0.002),
    "rmsprop": (torch.optim.RMSprop, 0.01),
    "sgd": (torch.optim.SGD, 0.01),
}

OptimizerFn = Union[None, str, Callable[[Any], torch.optim.Optimizer]]


def build_optimizer(optimizer_fn: OptimizerFn, model: torch.nn.Module, model_name: str, mixed_precision: bool,
                    device: torch.device) -> Optional[torch.optim.Optimizer]:
    """Create one optimizer for `model` (its parameters must already be on `device`).

    The optimizer gets a `scaler` attribute: a `GradScaler` for mixed precision on CUDA, else None.

    Args:
        optimizer_fn: An optimizer name, a function of the parameters, or None.
        model: The model whose parameters the optimizer updates.
        model_name: The model's name (for error messages).
        mixed_precision: Whether the model trains in mixed precision.
        device: The device the model lives on.

    Returns:
        The optimizer, or None when `optimizer_fn` is None.

    Raises:
        ValueError: For an unknown optimizer name.
        TypeError: If `optimizer_fn` is neither a name nor a callable, or does not return a torch optimizer.

    Example:
        >>> build_optimizer("sgd", torch.nn.Linear(2, 1), "m", False, torch.device("cpu")).param_groups[0]["lr"]
        0.01
    """
    if optimizer_fn is None:
        return None
    if isinstance(optimizer_fn, str):
        key = optimizer_fn.lower()
        if key not in DEFAULT_OPTIMIZERS:
            raise ValueError(f"Unknown optimizer {optimizer_fn!r} for torch model {model_name!r}; choose one of "
                             f"{sorted(DEFAULT_OPTIMIZERS)} or pass a function of the parameters")
        optimizer_class, lr = DEFAULT_OPTIMIZERS[key]
        optimizer = optimizer_class(model.parameters(), lr=lr)
    elif callable(optimizer_fn):
        optimizer = optimizer_fn(model.parameters())
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ConfigurationTypeError(f"optimizer_fn of torch model {model_name!r} must return a "
                                         f"torch.optim.Optimizer when called with the model's parameters; it returned "
                                         f"{type(optimizer).__name__}. (A TensorFlow-style optimizer_fn takes no "
                                         f"argument and cannot build a torch optimizer.)")
    else:
        raise TypeError(f"optimizer_fn of torch model {model_name!r} must be an optimizer name, a function of the "
                        f"parameters, None, or a Scheduler of those; got {type(optimizer_fn).__name__}")
    sharded = model.__dict__.get("fe_sharding") is not None  # build shards the model before its optimizers
    optimizer.scaler = make_grad_scaler(device, mixed_precision, sharded)  # type: ignore[attr-defined]
    return optimizer


def build_scheduled_optimizer(optimizer_fn: Union[OptimizerFn, Scheduler], model: torch.nn.Module, model_name: str,
                              mixed_precision: bool, device: torch.device
                              ) -> Union[None, torch.optim.Optimizer, Scheduler]:
    """`build_optimizer`, also for an `EpochScheduler` / `RepeatScheduler` of optimizer functions.

    A scheduler gets a new scheduler of the same kind back, with one optimizer built per scheduled value (the user's
    scheduler is left untouched).

    Raises:
        TypeError: For a Scheduler kind other than EpochScheduler and RepeatScheduler.
    """
    if isinstance(optimizer_fn, EpochScheduler):
        return EpochScheduler({epoch: build_optimizer(value, model, model_name, mixed_precision, device)
                               for epoch, value in optimizer_fn.epoch_dict.items()})
    if isinstance(optimizer_fn, RepeatScheduler):
        return RepeatScheduler([build_optimizer(value, model, model_name, mixed_precision, device)
                                for value in optimizer_fn.repeat_list])
    if isinstance(optimizer_fn, Scheduler):
        raise TypeError(f"optimizer_fn of torch model {model_name!r} is a {type(optimizer_fn).__name__}; only "
                        f"EpochScheduler and RepeatScheduler can schedule optimizers")
    return build_optimizer(optimizer_fn, model, model_name, mixed_precision, device)


def scheduled_optimizers(optimizer: Union[None, torch.optim.Optimizer, Scheduler]) -> List[torch.optim.Optimizer]:
    """The distinct optimizers of a model's `optimizer` attribute (a scheduler's in schedule order), Nones left out."""
    values = optimizer.get_all_values() if isinstance(optimizer, Scheduler) else [optimizer]
    distinct: List[torch.optim.Optimizer] = []
    for value in values:
        if value is not None and all(value is not seen for seen in distinct):
            distinct.append(value)
    return distinct


def current_optimizer_of(model: Any) -> torch.optim.Optimizer:
    """The optimizer `model` trains with now.

    Raises:
        ValueError: If the model has no optimizer at this point.
    """
    optimizer = getattr(model, "current_optimizer", None)
    if optimizer is None:
        raise ValueError(f"Model {getattr(model, 'model_name', type(model).__name__)!r} has no optimizer at this point "
                         f"(build it with an optimizer_fn, or check the optimizer's schedule)")
    return optimizer


def get_lr(model: Any) -> float:
    """The learning rate of the first parameter group of `model`'s current optimizer."""
    lr = current_optimizer_of(model).param_groups[0]["lr"]
    return float(lr.item() if isinstance(lr, torch.Tensor) else lr)


def set_lr(model: Any, lr: float) -> None:
    """Set the learning rate of every parameter group of `model`'s current optimizer."""
    for group in current_optimizer_of(model).param_groups:
        if isinstance(group["lr"], torch.Tensor):
            group["lr"].fill_(lr)
        else:
            group["lr"] = lr
