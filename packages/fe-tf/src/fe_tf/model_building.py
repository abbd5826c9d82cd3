"""Models that have no weights when `fe.build` runs, and the optimizer state they need once they do.

A Keras `Sequential` without an `Input` and a subclassed `keras.Model` create their weights on their first call.
`fe.build` cannot build their optimizers then (a Keras 3 optimizer built for no variables refuses the model's later
ones: "Unknown variable ... This optimizer can only be called for the variables it was originally built with"), so it
leaves them unbuilt. As Keras' own `fit` does, `TFNetwork` builds such models on the first batch (one eager pass of
the step's ops in warmup mode, which changes no weights) and then their optimizers, eagerly and in the active
strategy's scope, before any step is traced; loading an optimizer's saved state builds it first too.
"""
from __future__ import annotations

from typing import Any, List, Optional

import tensorflow as tf

from fe_tf._keras import build_optimizer
from fe_tf.optimizers import scheduled_optimizers

__all__ = ["model_is_built", "unbuilt_optimizers", "needs_building", "build_optimizers_of"]


def model_is_built(model: Any) -> bool:
    """Whether the Keras model has created its weights (always True for objects without a `built` flag)."""
    return bool(getattr(model, "built", True))


def unbuilt_optimizers(model: Any) -> List[Any]:
    """The model's optimizers (every value of a Scheduler) whose state is not created yet."""
    return [optimizer for optimizer in scheduled_optimizers(getattr(model, "optimizer", None))
            if getattr(optimizer, "built", True) is False]


def needs_building(model: Any) -> bool:
    """Whether the model or one of its optimizers still has to be built before a traced step can use them."""
    return not model_is_built(model) or bool(unbuilt_optimizers(model))


def build_optimizers_of(model: Any, strategy: Optional[tf.distribute.Strategy] = None) -> bool:
    """Build the state of the model's optimizers for its trainable variables, once the model has its weights.

    Args:
        model: A Keras model compiled by `fe.build`.
        strategy: The strategy whose scope creates the optimizer variables (default: the active one).

    Returns:
        Whether the model has its weights (False: nothing could be built yet).
    """
    if not model_is_built(model):
        return False
    optimizers = [optimizer for optimizer in scheduled_optimizers(getattr(model, "optimizer", None))
                  if not getattr(optimizer, "built", False)]  # tf-keras' legacy optimizers have no flag: idempotent
    if optimizers:
        with (strategy or tf.distribute.get_strategy()).scope():
            for optimizer in optimizers:
                build_optimizer(optimizer, model.trainable_variables)
    return True
