"""Describing models: the optimizer's name (`get_optimizer_name`) and parameter counts (`count_params`,
`get_model_parameters`), for torch and TensorFlow models alike."""
from __future__ import annotations

from typing import Any, Dict, Iterable

from fe_core.export import fe_export
from fe_core.util._framework_util import util_module_for
from fe_core.util.inspection import get_shape

__all__ = ["get_optimizer_name", "count_params", "get_model_parameters"]


def _backend_for(model: Any, function: str):
    backend = util_module_for(model, "models")
    if backend is None:
        raise ValueError(f"{function}: expected a torch.nn.Module or a tf.keras.Model, got "
                         f"{type(model).__module__}.{type(model).__qualname__}")
    return backend


@fe_export("fe.util.util.get_optimizer_name")
def get_optimizer_name(model: Any) -> str:
    """The name of the optimizer a model was compiled with by `fe.build` (e.g. 'Adam', 'SGD'), or 'None'.

    Args:
        model: A model built with `fe.build` (torch.nn.Module or tf.keras.Model).

    Returns:
        The optimizer's class name.

    Raises:
        ValueError: If `model` is not a torch or TensorFlow model.
    """
    return _backend_for(model, "get_optimizer_name").get_optimizer_name(model)


@fe_export("fe.util.util.count_params")
def count_params(weights: Iterable[Any]) -> int:
    """Count the scalar values in a list of weights (torch parameters, tf variables or numpy arrays).

    Example:
        >>> import numpy as np
        >>> count_params([np.zeros((3, 4)), np.zeros(4)])
        16

    Args:
        weights: The weight tensors.

    Returns:
        The total number of values.
    """
    total = 0
    for weight in weights:
        count = 1
        for dim in get_shape(weight):
            count *= int(dim or 0)
        total += count
    return total


@fe_export("fe.util.util.get_model_parameters")
def get_model_parameters(model: Any) -> Dict[str, int]:
    """Count a model's parameters.

    Example:
        >>> get_model_parameters(torch.nn.Linear(3, 2))  # doctest: +SKIP
        {'total_params': 8, 'trainable_params': 8, 'non_trainable_params': 0}

    Args:
        model: A torch.nn.Module or a tf.keras.Model (built, so its weights exist).

    Returns:
        {'total_params': ..., 'trainable_params': ..., 'non_trainable_params': ...}.

    Raises:
        ValueError: If `model` is not a torch or TensorFlow model.
    """
    trainable, non_trainable = _backend_for(model, "get_model_parameters").trainable_and_frozen_weights(model)
    trainable_count, frozen_count = count_params(trainable), count_params(non_trainable)
    return {"total_params": trainable_count + frozen_count, "trainable_params": trainable_count,
            "non_trainable_params": frozen_count}
