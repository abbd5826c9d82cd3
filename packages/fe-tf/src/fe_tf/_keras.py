"""The Keras fe-tf works with: the one `tf.keras` resolves to, decided once when fe_tf is imported.

TensorFlow 2.16+ ships with Keras 3 (`keras`); with `TF_USE_LEGACY_KERAS=1` set before TensorFlow is imported,
`tf.keras` is Keras 2 instead (the `tf-keras` package, `import tf_keras`), which runs model code written for
TensorFlow <= 2.15 unchanged. fe-tf never mixes the two: every module of fe_tf takes `keras` from here, and the few
places where the two Keras differ (dtype policies, optimizer classes and variables, loss scaling, variable names,
random state) go through the helpers below.

Example:
    >>> # from fe_tf._keras import keras, KERAS2
    >>> # keras.layers.Dense(10)     # a tf.keras layer, Keras 3 or tf-keras  # doctest: +SKIP
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import types
from typing import Any, List, Optional, Sequence, Tuple

import tensorflow as tf

from fe_core.install_hint import install_command

__all__ = ["keras", "layers", "ops", "KERAS2", "KERAS_PACKAGE", "model_types", "variable_types", "optimizer_types", "dtype_policy",
           "set_dtype_policy", "compute_dtype", "optimizer_variables", "build_optimizer", "variable_path",
           "keras3_model_under_keras2", "KERAS2_HINT", "keras2_hint", "add_keras2_hint", "use_generator_rng",
           "random_state_variables"]


def _package_of(api: Any) -> str:
    """The package ('keras' or 'tf_keras') a `tf.keras` module comes from, read from the classes it holds.

    Its `__name__` cannot tell: once a script ran `from tensorflow.keras import layers`, `tf.keras` is registered (and
    named) as `tensorflow.keras` whichever Keras it is; its `Model` is `tf_keras.src...` or `keras.src...` either way.
    """
    for attribute in ("Model", "layers", "optimizers"):
        value = getattr(api, attribute, None)
        owner = str(getattr(value, "__module__", None) or getattr(value, "__name__", None) or "")
        root = owner.split(".")[0]
        if root in ("tf_keras", "keras"):
            return root
    return "tf_keras" if str(getattr(api, "__name__", "keras")).split(".")[0] == "tf_keras" else "keras"


def _resolve() -> Tuple[Any, str]:
    """The Keras module `tf.keras` stands for, and its package name ('keras' or 'tf_keras'): what TensorFlow
    resolved, whichever of `tensorflow`, `tensorflow.keras`, `keras`, `tf_keras` and fe the script imported first.

    Raises:
        ImportError: When TF_USE_LEGACY_KERAS asks for tf-keras and it is not installed (the message names the extra).
    """
    try:
        package = _package_of(tf.keras)  # loads it: Keras 3's `keras._tf_keras.keras` or tf-keras' API
    except ImportError as error:
        if os.environ.get("TF_USE_LEGACY_KERAS", "").strip().lower() in ("1", "true") and (
                importlib.util.find_spec("tf_keras") is None):
            raise ImportError("TF_USE_LEGACY_KERAS is set, so TensorFlow uses tf-keras (Keras 2), which is not "
                              f"installed: {install_command('fe-tf', 'keras2')}, or unset TF_USE_LEGACY_KERAS to use "
                              "Keras 3") from error
        raise
    return importlib.import_module(package), package


keras, KERAS_PACKAGE = _resolve()
#: Whether the active Keras is Keras 2 (tf-keras, or a keras 2.x package).
KERAS2: bool = KERAS_PACKAGE == "tf_keras" or not str(getattr(keras, "__version__", "3")).startswith("3")
layers = keras.layers


def _moments(x: Any, axes: Sequence[int], keepdims: bool = False) -> Tuple[Any, Any]:
    """Mean and variance, computed in float32 for float16 inputs (as Keras 3's `ops.moments`)."""
    low = x.dtype in (tf.float16, tf.bfloat16)
    values = tf.cast(x, tf.float32) if low else x
    mean, variance = tf.nn.moments(values, axes=list(axes), keepdims=keepdims)
    return (tf.cast(mean, x.dtype), tf.cast(variance, x.dtype)) if low else (mean, variance)


# The few `keras.ops` functions fe-tf's layers use, as TensorFlow functions for Keras 2 (which has no `keras.ops`).
_TF_OPS = types.SimpleNamespace(
    cast=tf.cast, concatenate=lambda xs, axis=-1: tf.concat(list(xs), axis=axis), convert_to_tensor=tf.convert_to_tensor,
    matmul=tf.matmul, moments=_moments, power=tf.pow, rsqrt=tf.math.rsqrt, sum=tf.reduce_sum, tanh=tf.math.tanh)
#: `keras.ops` on Keras 3; TensorFlow equivalents of the functions fe-tf's layers use on Keras 2.
ops: Any = _TF_OPS if KERAS2 else keras.ops


def model_types() -> Tuple[type, ...]:
    """The Keras model classes loaded in this process (imports nothing)."""
    found = []
    for package in ("keras", "tf_keras"):
        module = sys.modules.get(package)
        model = getattr(module, "Model", None) if module is not None else None
        if isinstance(model, type):
            found.append(model)
    return tuple(found)


def keras3_model_under_keras2(obj: Any) -> bool:
    """Whether `obj` is a Keras 3 model while fe-tf runs on tf-keras (a script mixing `import keras` with
    `TF_USE_LEGACY_KERAS=1`)."""
    if not KERAS2:
        return False
    module = sys.modules.get("keras")
    model = getattr(module, "Model", None) if module is not None else None
    return isinstance(model, type) and model is not keras.Model and isinstance(obj, model)


@functools.lru_cache(maxsize=None)
def variable_types() -> Tuple[type, ...]:
    """The classes of model variables: `tf.Variable`, plus `keras.Variable` on Keras 3."""
    variable = getattr(keras, "Variable", None)
    return (tf.Variable,) if variable is None else (tf.Variable, variable)


@functools.lru_cache(maxsize=None)
def optimizer_types() -> Tuple[type, ...]:
    """The Keras optimizer base classes: Keras 3's, or tf-keras' current and legacy (`optimizers.legacy`) ones."""
    classes: List[type] = [keras.optimizers.Optimizer]
    legacy = getattr(getattr(keras.optimizers, "legacy", None), "Optimizer", None)
    if KERAS2 and isinstance(legacy, type):
        classes.append(legacy)
    return tuple(classes)


def dtype_policy() -> Any:
    """The global dtype policy (`keras.config.dtype_policy()`, or tf-keras' `mixed_precision.global_policy()`)."""
    if KERAS2:
        return keras.mixed_precision.global_policy()
    return keras.config.dtype_policy()


def set_dtype_policy(policy: Any) -> None:
    """Set the global dtype policy (a name such as 'mixed_float16', or a policy)."""
    if KERAS2:
        keras.mixed_precision.set_global_policy(policy)
    else:
        keras.config.set_dtype_policy(policy)


def compute_dtype() -> str:
    """The compute dtype of the global policy ('float32', or 'float16' under mixed precision)."""
    return str(dtype_policy().compute_dtype)


def _loss_scale_variables(optimizer: Any) -> List[Any]:
    """The state variables of a tf-keras `LossScaleOptimizer` (loss scale, good steps); [] for others."""
    state = getattr(optimizer, "_loss_scale", None)
    return [variable for variable in (getattr(state, "_current_loss_scale", None), getattr(state, "_counter", None))
            if variable is not None]


def optimizer_variables(optimizer: Any) -> List[Any]:
    """Every state variable of an optimizer, in a fixed order (with a tf-keras loss-scale optimizer's scale state)."""
    variables = optimizer.variables
    found = list(variables() if callable(variables) else variables)  # tf-keras' legacy optimizers: a method
    if KERAS2:
        known = {id(variable) for variable in found}
        found += [variable for variable in _loss_scale_variables(optimizer) if id(variable) not in known]
    return found


def build_optimizer(optimizer: Any, variables: Sequence[Any]) -> None:
    """Create the optimizer's state for `variables` now (Keras 3 `build`, tf-keras' legacy `_create_all_weights`)."""
    if getattr(optimizer, "built", False):
        return
    if hasattr(optimizer, "build"):
        optimizer.build(list(variables))
    else:  # tf-keras' legacy OptimizerV2 (also behind a LossScaleOptimizer) creates its slots on first use otherwise
        target = getattr(optimizer, "inner_optimizer", optimizer)
        target._create_all_weights(list(variables))  # pylint: disable=protected-access


def use_generator_rng() -> None:
    """On tf-keras, make random layers (Dropout, ...) draw from a seeded `tf.random.Generator` each, whose state is a
    variable fe saves with the model (`random_state_variables`), so a resumed run continues their random streams.

    tf-keras' default, TensorFlow's stateful random ops, keeps that state inside the traced ops where nothing can save
    it. Keras 3 always uses seed generators (saved as model variables). Seeded runs stay reproducible: each layer's
    generator is seeded from Keras' seed (`tf.keras.utils.set_random_seed`).
    """
    if KERAS2:
        keras.backend.experimental.enable_tf_random_generator()


def random_state_variables(model: Any) -> List[Any]:
    """tf-keras: the states of the `tf.random.Generator`s of the model's random layers (created now if need be), in
    layer order; [] on Keras 3, where they are model variables already."""
    if not KERAS2:
        return []
    found: List[Any] = []
    flatten = getattr(model, "_flatten_layers", None)
    for layer in (flatten(include_self=True, recursive=True) if flatten is not None else [model]):
        generator = getattr(layer, "_random_generator", None)
        if generator is None or getattr(generator, "_rng_type", None) != "stateful":
            continue
        generator._maybe_init()  # pylint: disable=protected-access
        state = getattr(getattr(generator, "_generator", None), "state", None)
        if state is not None:
            found.append(state)
    return found


def variable_path(variable: Any) -> str:
    """A variable's path (Keras 3) or name (tf-keras, tf.Variable)."""
    path: Optional[str] = getattr(variable, "path", None)
    return str(path if path is not None else variable.name)


#: The line fe adds to an error Keras 3 raises for Keras 2 model code.
KERAS2_HINT = ("fe: this looks like Keras 2 model code (tf.keras of TensorFlow <= 2.15), which Keras 3 rejects; it runs "
               f"unchanged on tf-keras: {install_command('fe-tf', 'keras2')}, and set TF_USE_LEGACY_KERAS=1 before "
               "TensorFlow is imported")

# What Keras 3 says about Keras 2 idioms: Keras 2 layer arguments (batch_input_shape, ...), TensorFlow functions on
# symbolic tensors of a functional model, Variable.get_shape(), add_weight(shape=<int>), a Python value passed
# positionally to a layer's call, Sequential layers taking two inputs, tf.keras.optimizers.legacy.
_KERAS3_REJECTIONS = (
    "Unrecognized keyword arguments passed to",
    "A KerasTensor cannot be used as input to a TensorFlow function",
    "object has no attribute 'get_shape'",
    "to a shape.",
    "Only input tensors may be passed as positional arguments",
    "can only have a single required positional argument",
    "`keras.optimizers.legacy` is not supported in Keras 3",
)


def keras2_hint(error: BaseException) -> Optional[str]:
    """`KERAS2_HINT` when `error` (or an error it was raised from) is Keras 3 rejecting a Keras 2 idiom and fe-tf
    runs on Keras 3; else None."""
    if KERAS2:
        return None
    seen = set()
    current: Optional[BaseException] = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        message = str(current)
        if KERAS2_HINT in message:
            return None  # already said
        if any(pattern in message for pattern in _KERAS3_REJECTIONS):
            return KERAS2_HINT
        current = current.__cause__ or current.__context__
    return None


def add_keras2_hint(error: BaseException) -> None:
    """Append `KERAS2_HINT` as one more line of `error`'s message, in place, when `keras2_hint` applies."""
    hint = keras2_hint(error)
    if hint is None:
        return
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]}\n{hint}",) + tuple(error.args[1:])
        if isinstance(getattr(error, "msg", None), str):  # ImportError's message is its `msg`
            error.msg = f"{error.msg}\n{hint}"  # type: ignore[attr-defined]
    if hint not in str(error) and hasattr(error, "add_note"):
        error.add_note(hint)
