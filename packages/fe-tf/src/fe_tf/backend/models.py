"""Keras model functions behind `fe_core.backend.models` (eager or inside `tf.function`)."""
from __future__ import annotations

import contextlib
import os
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from fe_tf import checkpoint
from fe_tf.optimizers import get_learning_rate, inner_optimizer, set_learning_rate
from fe_tf._keras import KERAS2
from fe_tf.h5_weights import save_h5_weights
from fe_tf.precision import is_loss_scaled, loss_scale

__all__ = ["feed_forward", "apply_unscaled_gradients", "update_step", "get_lr", "set_lr", "save_model", "load_model",
           "l2_regularization"]


def _name(model: Any) -> str:
    return str(getattr(model, "model_name", None) or getattr(model, "name", "model"))


def _as_input(value: Any) -> Any:
    return tf.convert_to_tensor(value) if isinstance(value, (np.ndarray, np.generic, int, float, bool)) else value


def feed_forward(model: Any, x: Sequence[Any], training: bool) -> Any:
    """The TensorFlow case of `fe.backend.feed_forward`.

    Inside a traced function the model is called as is. Called eagerly (a trace running a model per batch), a built
    Keras model runs through a `tf.function` cached per model and `training` flag: an eager Keras 3 call runs every
    layer's Python code and costs several times the traced call. Its shapes relax on the second batch shape
    (`reduce_retracing`), so batches of varying size retrace at most once or twice. A model that cannot be traced
    (or is not built yet) is called eagerly.
    """
    inputs = [_as_input(value) for value in x]
    data = inputs[0] if len(inputs) == 1 else inputs
    if tf.executing_eagerly() and getattr(model, "built", False):
        forward = _traced_forward(model, training)
        if forward is not None:
            try:
                return forward(data)
            except (TypeError, ValueError, NotImplementedError):
                result = model(data, training=training)  # the user's own error, if it is one, raises here
                _FORWARDS[id(model)] = (weakref.ref(model), None, None)  # not traceable: eager from now on
                return result
    return model(data, training=training)


# id(model) -> (weak reference to the model, its traced forward for training=False, for training=True)
_FORWARDS: Dict[int, Tuple[Any, Any, Any]] = {}


def _traced_forward(model: Any, training: bool) -> Optional[Callable[[Any], Any]]:
    """The cached `tf.function` running `model(x, training=training)` (None: the model runs eagerly)."""
    entry = _FORWARDS.get(id(model))
    if entry is None or entry[0]() is not model:
        for key in [key for key, (ref, _, _) in _FORWARDS.items() if ref() is None]:
            del _FORWARDS[key]
        reference = weakref.ref(model)  # the functions must not keep the model alive
        entry = (reference,
                 tf.function(lambda data: reference()(data, training=False), reduce_retracing=True),
                 tf.function(lambda data: reference()(data, training=True), reduce_retracing=True))
        _FORWARDS[id(model)] = entry
    return entry[2] if training else entry[1]


def _current_optimizer(model: Any, action: str) -> Any:
    optimizer = getattr(model, "current_optimizer", None)
    if optimizer is None:
        raise ValueError(f"fe.backend.{action}: Keras model {_name(model)!r} has no (current) optimizer; build it "
                         f"with fe.build(..., optimizer_fn=...)")
    return optimizer


def apply_unscaled_gradients(optimizer: Any, gradients: Sequence[Any], variables: Sequence[Any]) -> None:
    """Apply true (unscaled) gradients; a `LossScaleOptimizer` gets them multiplied by its scale, which it divides
    out again (and it still skips the step when a gradient is not finite); tf-keras' takes them unscaled."""
    if is_loss_scaled(optimizer) and not KERAS2:
        scale = loss_scale(optimizer)
        gradients = [None if g is None else g * tf.cast(scale, g.dtype) for g in gradients]
    optimizer.apply_gradients(zip(gradients, variables))


def update_step(model: Any, gradients: Sequence[Any]) -> Callable[[], None]:
    """A function applying `gradients` of the model's trainable variables with its current optimizer.

    Raises:
        ValueError: If the number of gradients differs from the number of trainable variables.
    """
    optimizer = _current_optimizer(model, "update_model")
    variables = model.trainable_variables
    gradients = list(gradients) if isinstance(gradients, (list, tuple)) else [gradients]
    if len(gradients) != len(variables):
        raise ValueError(f"fe.backend.update_model: got {len(gradients)} gradients, but Keras model "
                         f"{_name(model)!r} has {len(variables)} trainable variables")

    def step() -> None:
        apply_unscaled_gradients(optimizer, gradients, variables)

    return step


def get_lr(model: Any) -> float:
    """The TensorFlow case of `fe.backend.get_lr`."""
    return get_learning_rate(_current_optimizer(model, "get_lr"))


def set_lr(model: Any, lr: float, weight_decay: Optional[float]) -> None:
    """The TensorFlow case of `fe.backend.set_lr`."""
    optimizer = _current_optimizer(model, "set_lr")
    set_learning_rate(optimizer, lr)
    if weight_decay is not None:
        inner_optimizer(optimizer).weight_decay = weight_decay


@contextlib.contextmanager
def _named(model: Any, name: str) -> Iterator[None]:
    """Give the model `name` while fe_tf.checkpoint (which names files after `model.model_name`) runs."""
    had, previous = "model_name" in model.__dict__, model.__dict__.get("model_name")
    model.model_name = name
    try:
        yield
    finally:
        if had:
            model.model_name = previous
        else:
            del model.model_name


def save_model(model: Any, save_dir: str, model_name: str, save_optimizer: bool, save_architecture: bool) -> str:
    """The TensorFlow case of `fe.backend.save_model`: `<model_name>.h5` as in FastEstimator (in the HDF5 layout
    Keras' own `model.load_weights` reads for that name, see `fe_tf.h5_weights`; `load_model` reads it too),
    `<model_name>_opt.npz`, and `<model_name>.keras` (the whole model) with `save_architecture`."""
    os.makedirs(save_dir, exist_ok=True)
    with _named(model, model_name):
        files = checkpoint.save_model(model, save_dir, save_optimizer)
    path = os.path.join(save_dir, f"{model_name}.h5")
    save_h5_weights(model, path)  # written in a private file, then moved to FastEstimator's name
    os.remove(os.path.join(save_dir, files[0]))  # the checkpoint format's '<name>.weights.h5'; '<name>.h5' replaces it
    if save_architecture:
        attached = {key: model.__dict__[key] for key in ("optimizer", "current_optimizer") if key in model.__dict__}
        for key in attached:  # fe's optimizers are not part of the architecture file
            setattr(model, key, None)
        try:
            model.save(os.path.join(save_dir, f"{model_name}.keras"))
        finally:
            for key, value in attached.items():
                setattr(model, key, value)
    return path


def _weights_file(weights_path: str) -> str:
    if os.path.exists(weights_path):
        return weights_path
    stem, extension = os.path.splitext(weights_path)
    if extension == ".h5" and not stem.endswith(".weights") and os.path.exists(f"{stem}.weights.h5"):
        return f"{stem}.weights.h5"  # FastEstimator's '<name>.h5' for Keras 3's '<name>.weights.h5'
    if extension == ".h5" and stem.endswith(".weights") and os.path.exists(f"{stem[:-len('.weights')]}.h5"):
        return f"{stem[:-len('.weights')]}.h5"  # '<name>.weights.h5' for the '<name>.h5' fe now writes
    raise FileNotFoundError(f"fe.backend.load_model: weights file {weights_path!r} does not exist")


def load_model(model: Any, weights_path: str, load_optimizer: bool) -> None:
    """The TensorFlow case of `fe.backend.load_model`: weights from `<name>.h5` (FastEstimator's name, in either
    HDF5 layout), `<name>.weights.h5` or `<name>.keras`; the optimizer from `<name>_opt.npz` next to them."""
    path = _weights_file(weights_path)
    checkpoint.load_weights(model, path)
    if load_optimizer:
        directory, file_name = os.path.split(os.path.abspath(path))
        for suffix in (".weights.h5", ".h5", ".keras"):
            if file_name.endswith(suffix):
                file_name = file_name[:-len(suffix)]
                break
        if os.path.basename(path) not in (f"{file_name}.weights.h5", f"{file_name}.h5"):
            raise ValueError(f"fe.backend.load_model: the optimizer is found next to '<name>.h5' weights as "
                             f"'<name>_opt.npz'; {weights_path!r} is not such a file")
        checkpoint.load_optimizer_state(model, directory, file_name)


def l2_regularization(model: Any, beta: float) -> tf.Tensor:
    """The TensorFlow case of `fe.backend.l2_regularization`."""
    variables: List[Any] = list(model.trainable_variables)
    if not variables:
        return tf.constant(0.0)
    return beta * tf.add_n([tf.nn.l2_loss(tf.cast(variable, tf.float32)) for variable in variables])
