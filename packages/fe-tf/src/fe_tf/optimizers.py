"""Optimizers for Keras models: names, building (eagerly, so their state exists before the first step), learning
rates.

`optimizer_fn` in `build` may be an optimizer name, a no-argument function returning a Keras optimizer, None (a model
that is not trained), or a `Scheduler` of those. Names give the active Keras' optimizers (Keras 3, or tf-keras under
`TF_USE_LEGACY_KERAS=1`, see `fe_tf._keras`) with FastEstimator 1.x's defaults (which are TensorFlow's own): learning
rate 0.001, except 0.01 for 'sgd'. Under tf-keras, functions may also return `tf.keras.optimizers.legacy.*` optimizers.

Example:
    >>> # optimizer = make_optimizer("adam", model, mixed_precision=False, model_name="model")  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from fe_core.config_error import ConfigurationTypeError
from fe_core.schedule import EpochScheduler, RepeatScheduler, Scheduler
from fe_tf._keras import add_keras2_hint, build_optimizer, keras, optimizer_types
from fe_tf.precision import is_loss_scaled, wrap_loss_scaling

__all__ = ["OPTIMIZERS", "make_optimizer", "build_optimizers", "scheduled_optimizers", "get_learning_rate",
           "set_learning_rate", "inner_optimizer"]

# name -> (optimizer class, FastEstimator 1.x / TensorFlow default learning rate)
OPTIMIZERS: Dict[str, Tuple[Callable[..., Any], float]] = {
    "adadelta": (keras.optimizers.Adadelta, 0.001),
    "adagrad": (keras.optimizers.Adagrad, 0.001),
    "adam": (keras.optimizers.Adam, 0.001),
    "adamax": (keras.optimizers.Adamax, 0.001),
    "rmsprop": (keras.optimizers.RMSprop, 0.001),
    "sgd": (keras.optimizers.SGD, 0.01),
}


def make_optimizer(optimizer_fn: Any, model: Any, mixed_precision: bool, model_name: str) -> Any:
    """Create one optimizer for `model` and build its variables.

    Args:
        optimizer_fn: An optimizer name, a no-argument function returning a Keras optimizer, or None.
        model: The Keras model whose trainable variables the optimizer updates.
        mixed_precision: Wrap the optimizer in a `LossScaleOptimizer`.
        model_name: The model's name, for error messages.

    Returns:
        A built Keras optimizer (a `LossScaleOptimizer` in mixed precision), or None.

    Raises:
        ValueError: For an unknown optimizer name.
        TypeError: When `optimizer_fn` is not a name, a function or None, or the function does not return a Keras
            optimizer.
    """
    if optimizer_fn is None:
        return None
    if isinstance(optimizer_fn, str):
        key = optimizer_fn.lower()
        if key not in OPTIMIZERS:
            raise ValueError(f"Unknown optimizer {optimizer_fn!r} for model {model_name!r}; choose one of "
                             f"{sorted(OPTIMIZERS)} or pass a no-argument function returning a Keras optimizer")
        optimizer_class, learning_rate = OPTIMIZERS[key]
        optimizer = optimizer_class(learning_rate=learning_rate)
    elif isinstance(optimizer_fn, optimizer_types()):
        raise TypeError(f"optimizer_fn of model {model_name!r} is an optimizer instance; pass a function creating it "
                        f"instead (for example `lambda: keras.optimizers.{type(optimizer_fn).__name__}(...)`) so every "
                        "model gets its own optimizer")
    elif callable(optimizer_fn):
        try:
            optimizer = optimizer_fn()
        except TypeError as error:
            raise ConfigurationTypeError(f"optimizer_fn of TensorFlow model {model_name!r} must be callable without "
                                         f"arguments (torch-style functions take the parameters; this one raised: "
                                         f"{error})") from error
        except Exception as error:  # e.g. tf.keras.optimizers.legacy under Keras 3: name the tf-keras route
            add_keras2_hint(error)
            raise
        if not isinstance(optimizer, optimizer_types()):
            raise ConfigurationTypeError(f"optimizer_fn of model {model_name!r} must return a Keras optimizer, got "
                                         f"{type(optimizer).__module__}.{type(optimizer).__qualname__}")
    else:
        raise TypeError(f"optimizer_fn of model {model_name!r} must be an optimizer name, a no-argument function, "
                        f"None or a Scheduler of those, got {type(optimizer_fn).__name__}")
    if mixed_precision:
        optimizer = wrap_loss_scaling(optimizer)
    if getattr(model, "built", True):  # a model without weights yet gets its optimizer built with them (TFNetwork)
        build_optimizer(optimizer, model.trainable_variables)
    return optimizer


def build_optimizers(optimizer_fn: Any, model: Any, mixed_precision: bool, model_name: str) -> Any:
    """`make_optimizer` for a single value or for every entry of a Scheduler (each entry is built once).

    Returns:
        An optimizer, None, or a Scheduler of the same kind holding the built optimizers.
    """
    if isinstance(optimizer_fn, EpochScheduler):
        return EpochScheduler({epoch: make_optimizer(value, model, mixed_precision, model_name)
                               for epoch, value in optimizer_fn.epoch_dict.items()})
    if isinstance(optimizer_fn, RepeatScheduler):
        return RepeatScheduler([make_optimizer(value, model, mixed_precision, model_name)
                                for value in optimizer_fn.repeat_list])
    if isinstance(optimizer_fn, Scheduler):
        raise TypeError(f"optimizer_fn of model {model_name!r}: only EpochScheduler and RepeatScheduler are supported, "
                        f"got {type(optimizer_fn).__name__}")
    return make_optimizer(optimizer_fn, model, mixed_precision, model_name)


def scheduled_optimizers(optimizer: Any) -> List[Any]:
    """The distinct optimizers of a model's `optimizer` attribute (a Scheduler's values in order, None dropped)."""
    values = optimizer.get_all_values() if isinstance(optimizer, Scheduler) else [optimizer]
    found: List[Any] = []
    for value in values:
        if value is not None and all(value is not other for other in found):
            found.append(value)
    return found


def inner_optimizer(optimizer: Any) -> Any:
    """The optimizer doing the update (the wrapped one for a `LossScaleOptimizer`)."""
    return optimizer.inner_optimizer if is_loss_scaled(optimizer) else optimizer


def get_learning_rate(optimizer: Any) -> float:
    """The current learning rate of a Keras optimizer (evaluated for learning-rate schedules).

    Keras keeps it as a float32 variable; it is returned as the Python float with the same shortest decimal form
    (0.001, not 0.0010000000474974513), so logs show the rate the user set.
    """
    learning_rate = optimizer.learning_rate
    value = learning_rate.numpy() if hasattr(learning_rate, "numpy") else learning_rate
    if isinstance(value, (np.floating, np.ndarray)) and np.asarray(value).dtype == np.float32:
        return float(str(np.float32(value)))
    return float(value)


def set_learning_rate(optimizer: Any, learning_rate: float) -> None:
    """Assign a new learning rate (takes effect in traced steps at once: it is a variable read by the graph).

    Raises:
        TypeError: If the optimizer was created with a `LearningRateSchedule`, whose rate cannot be set.
    """
    optimizer.learning_rate = float(learning_rate)

