"""`LRScheduler`: set a model's learning rate from a function of the training step or epoch."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Union

from fe_core.config_error import ConfigurationError
from fe_core.data import Data
from fe_core.framework.registry import model_backend
from fe_core.trace.adapt.model_metric import model_name_of
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["LRScheduler"]

_UNITS = ("step", "epoch")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _schedule_unit(lr_fn: Callable[..., float]) -> str:
    """'step' or 'epoch': the name of `lr_fn`'s one required argument."""
    if isinstance(lr_fn, str):
        raise ConfigurationError(f"LRScheduler lr_fn {lr_fn!r} is not supported: pass a function of 'step' or "
                                 f"'epoch', or fe.schedule.ARC() for the ARC learning-rate controller")
    if not callable(lr_fn):
        raise ConfigurationError(f"LRScheduler lr_fn must be a function of 'step' or 'epoch', got "
                                 f"{type(lr_fn).__name__}")
    try:
        parameters = list(inspect.signature(lr_fn).parameters.values())
    except (TypeError, ValueError) as error:
        raise ValueError(f"LRScheduler cannot read the signature of lr_fn {lr_fn!r}; pass a function whose argument "
                         f"is named 'step' or 'epoch'") from error
    positional = [p.name for p in parameters if p.kind in _POSITIONAL]
    required = [p.name for p in parameters if p.kind not in _VARIADIC and p.default is inspect.Parameter.empty]
    if positional and positional[0] in _UNITS and set(required) <= {positional[0]}:
        return positional[0]
    raise ConfigurationError(f"LRScheduler lr_fn must take one argument named 'step' or 'epoch' (any others need "
                             f"defaults), but its parameters are {[p.name for p in parameters]}; wrap it, for example "
                             f"`lambda step: cosine_decay(step, cycle_length=1000, init_lr=1e-3)`")


@fe_export("fe.trace.adapt.lr_scheduler.LRScheduler", "fe.trace.adapt.LRScheduler")
class LRScheduler(Trace):
    """Change a model's learning rate during training with a function of the step or the epoch.

    Whether `lr_fn` is called with the global step or the epoch (both counting from 1) is decided by the name of its
    argument. A step-based rate is set at the beginning of every training step, an epoch-based one at the beginning
    of every training epoch, through the backend of the model's own framework (whatever the Network's framework),
    as `fe.backend.set_lr` does. At each training log step (step 1 and every `log_steps`, as the Estimator logs),
    the current rate is logged as `<model_name>_lr`.

    Args:
        model: A model built with `build` (with an optimizer).
        lr_fn: A function of `step` or of `epoch` (other parameters must have defaults) returning the learning rate, or
            an `fe.schedule.ARC` controller (which reads the model's loss in training and evaluation and changes the
            rate every `ARC.frequency` epochs).
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".

    Raises:
        ValueError: If `lr_fn` is not an ARC nor a function of one argument named 'step' or 'epoch'.

    Example:
        >>> # from fe_core.schedule import cosine_decay
        >>> # LRScheduler(model, lr_fn=lambda step: cosine_decay(step, cycle_length=3750, init_lr=1e-3))
        >>> # LRScheduler(model, lr_fn=lambda epoch: 1e-3 * 0.9 ** (epoch - 1))
    """

    def __init__(self, model: Any, lr_fn: Callable[[int], float],
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        self.arc = lr_fn if callable(getattr(lr_fn, "lr_for_epoch", None)) else None  # fe.schedule.ARC
        self.schedule_mode = "epoch" if self.arc is not None else _schedule_unit(lr_fn)
        super().__init__(mode=("train", "eval") if self.arc is not None else "train",
                         outputs=f"{model_name_of(model)}_lr", ds_id=ds_id)
        self.model = model
        self.lr_fn = lr_fn
        self._per_step = self.schedule_mode == "step"

    def on_begin(self, data: Data) -> None:
        if self.arc is not None:  # ARC reads the loss this model is updated with
            losses = sorted(op.loss_name for op in getattr(self.system.network, "ops", [])
                            if getattr(op, "model", None) is self.model and getattr(op, "loss_name", None))
            if not losses:
                raise ValueError(f"LRScheduler with ARC: no UpdateOp updates model {model_name_of(self.model)!r} "
                                 f"with a loss, so ARC has no loss to read")
            self.inputs = [losses[0]]

    def _set_lr(self, time: int) -> None:
        model_backend(self.model).set_lr(self.model, float(self.lr_fn(time)))

    def on_epoch_begin(self, data: Data) -> None:
        if self.arc is not None:
            if self.system.mode == "train":
                backend = model_backend(self.model)
                new_lr = self.arc.lr_for_epoch(self.system.epoch_idx, backend.get_lr(self.model))
                if new_lr is not None:
                    backend.set_lr(self.model, new_lr)
        elif not self._per_step:
            self._set_lr(self.system.epoch_idx)

    def on_epoch_end(self, data: Data) -> None:
        if self.arc is not None:
            system = self.system
            loss = data.get(self.inputs[0]) if system.mode == "eval" else None
            self.arc.record_epoch_end(system.mode, system.epoch_idx, loss, model_backend(self.model).get_lr(self.model))

    def on_batch_begin(self, data: Data) -> None:
        if self._per_step:
            self._set_lr(self.system.global_step)

    def on_batch_end(self, data: Data) -> None:
        system = self.system
        if self.arc is not None:
            if system.mode != "train":
                return
            self.arc.record_train_step(data[self.inputs[0]])
        log_steps = system.log_steps
        if log_steps and (system.global_step % log_steps == 0 or system.global_step == 1):
            data.write_with_log(self.outputs[0], model_backend(self.model).get_lr(self.model))
