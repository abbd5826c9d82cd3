"""`TFBackend`: the 'tf' entry of fe's backend registry (TensorFlow 2.16+ with Keras 3, or with tf-keras when
`TF_USE_LEGACY_KERAS=1`; see `fe_tf._keras`).

It classifies Keras models (without importing anything when Keras is not loaded), makes `TFNetwork`s, compiles models
with optimizers (`fe.build`), provides the kernels of the generic ops (`fe_tf.kernels`), converts tensors, saves and
loads weights and optimizer state (`fe_tf.checkpoint`), reads and sets learning rates, seeds TensorFlow and Keras, and
stores MirroredStrategy objects in checkpoints (`fe_tf.distribute`).

Random state: `get_rng_state` returns plain data for what TensorFlow keeps as state, namely the global
`tf.random.Generator` and Keras 3's global `SeedGenerator` (used by unseeded `keras.random` calls; tf-keras has none),
each only if it exists; None when neither does. TensorFlow's stateless op-level seeding (`tf.random.set_seed` plus per-op counters)
has no state to save, and the seed generators of layers such as Dropout are saved with the model
(`fe_tf.checkpoint`).

Example:
    >>> # from fe_core.framework import get_backend
    >>> # backend = get_backend("tf")            # imports fe_tf (and TensorFlow)  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from fe_core.framework import Backend, StateReducer
from fe_core.schedule import Scheduler
from fe_tf import checkpoint, h5_weights
from fe_tf._keras import (KERAS2, KERAS_PACKAGE, add_keras2_hint, keras, keras3_model_under_keras2, model_types,
                          use_generator_rng, variable_types)
from fe_tf.distribute import (MIRRORED_STRATEGY_REDUCER, active_data_parallel_strategy, ensure_multi_gpu_strategy,
                              ensure_multi_worker_strategy)
from fe_tf.kernels import TFKernels, prepare_accumulators
from fe_tf.network import TFNetwork
from fe_tf.optimizers import build_optimizers, get_learning_rate, set_learning_rate
from fe_tf.precision import precision_policy

__all__ = ["TFBackend"]


def _current_optimizer(model: Any, action: str) -> Any:
    optimizer = getattr(model, "current_optimizer", None)
    if optimizer is None:
        name = getattr(model, "model_name", getattr(model, "name", "model"))
        raise ValueError(f"Cannot {action} the learning rate of model {name!r}: it has no (current) optimizer")
    return optimizer


_TF_DTYPES = {dtype.name: dtype for dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int8, tf.int16,
                                              tf.int32, tf.int64, tf.uint8, tf.bool, tf.complex64, tf.complex128)}


def _reduce_tf_value(value: Any) -> Dict[str, Any]:
    return {"dtype": value.dtype.name, "value": np.asarray(value.numpy())}


def _tf_dtype(data: Any) -> Any:
    if not isinstance(data, dict) or not isinstance(data.get("dtype"), str) or "value" not in data:
        raise ValueError(f"A checkpointed tf value should be {{'dtype': str, 'value': array}}, found {data!r:.80}")
    dtype = _TF_DTYPES.get(data["dtype"])
    if dtype is None:
        raise ValueError(f"A checkpointed tf value names the dtype {data['dtype']!r:.40}, which is not one of "
                         f"{sorted(_TF_DTYPES)}")
    return dtype


def _restore_tf_variable(data: Any) -> tf.Variable:
    return tf.Variable(tf.constant(data["value"], dtype=_tf_dtype(data)))


def _assign_tf_variable(current: tf.Variable, data: Any) -> None:
    value = np.asarray(data.numpy()) if hasattr(data, "numpy") else np.asarray(data["value"])
    if tuple(value.shape) != tuple(current.shape):
        raise ValueError(f"A checkpointed tf.Variable of shape {value.shape} cannot be restored into one of shape "
                         f"{tuple(current.shape)}")
    current.assign(tf.cast(value, current.dtype))


TF_VARIABLE_REDUCER = StateReducer("tf.Variable", lambda obj: isinstance(obj, tf.Variable), _reduce_tf_value,
                                   _restore_tf_variable, _assign_tf_variable)
TF_TENSOR_REDUCER = StateReducer("tf.Tensor", lambda obj: tf.is_tensor(obj) and not isinstance(obj, tf.Variable),
                                 _reduce_tf_value, lambda data: tf.constant(data["value"], dtype=_tf_dtype(data)))


class TFBackend(TFKernels, Backend):
    """The TensorFlow backend (Keras 3, or tf-keras under `TF_USE_LEGACY_KERAS=1`)."""

    name = "tf"
    framework_module = "tensorflow"
    model_extension = "weights.h5"

    # ------------------------------------------------------------------ models
    def owns_model(self, obj: Any) -> bool:
        """Whether `obj` is a Keras model, of Keras 3 or tf-keras (never imports Keras)."""
        classes = model_types()
        return bool(classes) and isinstance(obj, classes)

    def make_network(self, ops: Sequence[Any], pops: Optional[Sequence[Any]], slicers: Optional[Sequence[Any]]
                     ) -> TFNetwork:
        """A `TFNetwork` of these ops."""
        return TFNetwork(ops, pops, slicers)

    @contextlib.contextmanager
    def build_scope(self, mixed_precision: bool) -> Iterator[None]:
        """The dtype policy (`mixed_float16` or `float32`) while `model_fn` runs; on a multi-GPU machine a global
        MirroredStrategy is set first (as FastEstimator does), so models are built with mirrored variables; with
        TF_CONFIG naming several workers, a MultiWorkerMirroredStrategy (see `fe_tf.distribute`). An error Keras 3 raises
        for Keras 2 model code gets one more line naming the tf-keras route (`fe_tf._keras.KERAS2_HINT`)."""
        ensure_multi_worker_strategy()  # before anything that starts TensorFlow's context
        ensure_multi_gpu_strategy()
        use_generator_rng()  # tf-keras: random layers with state fe can checkpoint
        with precision_policy(mixed_precision):
            try:
                yield
            except Exception as error:  # raised by model_fn
                add_keras2_hint(error)
                raise

    def compile_model(self, model: Any, optimizer_fn: Any, weights_path: Optional[str], model_name: str,
                      mixed_precision: bool) -> Any:
        """Attach name, optimizer(s) (built now, in the active strategy's scope) and precision to a Keras model.

        Raises:
            ValueError: For an unknown optimizer name.
            TypeError: For an optimizer_fn of the wrong kind.
            FileNotFoundError: If `weights_path` does not exist.
        """
        ensure_multi_worker_strategy()  # TF_CONFIG with several workers: the strategy (or a clear error) first
        if keras3_model_under_keras2(model):
            raise TypeError(f"Model {model_name!r} is a Keras 3 model (`import keras`), but TF_USE_LEGACY_KERAS=1 makes "
                            f"fe-tf use tf-keras ({KERAS_PACKAGE}): build it with `tf.keras` (or `import tf_keras as "
                            "keras`), or unset TF_USE_LEGACY_KERAS to use Keras 3")
        with tf.distribute.get_strategy().scope():
            optimizer = build_optimizers(optimizer_fn, model, mixed_precision, model_name)
        model.model_name = model_name
        model.optimizer = optimizer
        model.current_optimizer = optimizer.get_current_value(1) if isinstance(optimizer, Scheduler) else optimizer
        model.mixed_precision = mixed_precision
        model.fe_compiled = True
        if weights_path:
            checkpoint.load_weights(model, weights_path)
        return model

    # ------------------------------------------------------------------ tensors and devices
    def to_tensor(self, data: Any, device: Any = None) -> Any:
        """numpy arrays (nested in dicts, lists, tuples) to tf tensors."""
        if isinstance(data, dict):
            return {key: self.to_tensor(value) for key, value in data.items()}
        if isinstance(data, (list, tuple)):
            return type(data)(self.to_tensor(value) for value in data)
        if isinstance(data, (np.ndarray, np.generic, int, float, bool)):
            return tf.convert_to_tensor(data)
        return data

    def to_numpy(self, data: Any) -> Any:
        """tf tensors and variables (nested in dicts, lists, tuples) to numpy."""
        if isinstance(data, (tf.Tensor, tf.Variable)):
            return data.numpy()
        if isinstance(data, dict):
            return {key: self.to_numpy(value) for key, value in data.items()}
        if isinstance(data, (list, tuple)):
            return type(data)(self.to_numpy(value) for value in data)
        if isinstance(data, variable_types()):
            return data.numpy()
        return data

    def num_devices(self) -> int:
        """The number of GPUs TensorFlow sees."""
        return len(tf.config.list_physical_devices("GPU"))

    def is_native_dataset(self, dataset: Any) -> bool:
        """Whether `dataset` is a `tf.data.Dataset` (only checked when TensorFlow is loaded)."""
        tf_module = sys.modules.get("tensorflow")
        return tf_module is not None and isinstance(dataset, tf_module.data.Dataset)

    # ------------------------------------------------------------------ state
    def save_model(self, model: Any, save_dir: str, save_optimizer: bool) -> List[str]:
        """Write `<name>.weights.h5` (and `<name>_opt.npz`); return the file names."""
        return checkpoint.save_model(model, save_dir, save_optimizer)

    def load_model(self, model: Any, load_dir: str, load_optimizer: bool) -> None:
        """Read what `save_model` wrote back into `model`."""
        checkpoint.load_model(model, load_dir, load_optimizer)

    def save_weights(self, model: Any, path: str) -> str:
        """Write the weights for ModelSaver / BestModelSaver, whose file is FastEstimator's `<name>.h5`: in the HDF5
        layout Keras' own `model.load_weights('<name>.h5')` reads (see `fe_tf.h5_weights`)."""
        return h5_weights.save_h5_weights(model, path)

    def load_weights(self, model: Any, path: str) -> None:
        checkpoint.load_weights(model, path)

    def get_lr(self, model: Any) -> float:
        """The learning rate of the model's current optimizer."""
        return get_learning_rate(_current_optimizer(model, "read"))

    def set_lr(self, model: Any, lr: float) -> None:
        """Set the learning rate of the model's current optimizer."""
        set_learning_rate(_current_optimizer(model, "set"), lr)

    def seed(self, seed: int) -> None:
        """Seed python, numpy, TensorFlow and Keras (`keras.utils.set_random_seed`), reset the global
        `tf.random.Generator`, and switch TensorFlow to deterministic kernels."""
        ensure_multi_worker_strategy()  # TF_CONFIG with several workers: before the first TensorFlow op
        keras.utils.set_random_seed(seed)
        tf.random.set_global_generator(tf.random.Generator.from_seed(seed))
        tf.config.experimental.enable_op_determinism()

    def get_rng_state(self) -> Optional[Dict[str, Any]]:
        """The global `tf.random.Generator` and Keras 3's global SeedGenerator states (plain data), or None."""
        from tensorflow.python.ops import stateful_random_ops  # pylint: disable=import-outside-toplevel
        state: Dict[str, Any] = {}
        generator = stateful_random_ops.global_generator
        if generator is not None:
            state["tf_generator"] = {"state": generator.state.numpy(), "algorithm": int(generator.algorithm)}
        if not KERAS2:  # tf-keras' random layers draw from TensorFlow's own generators
            from keras.src.backend.common import global_state  # pylint: disable=import-outside-toplevel
            seed_generator = global_state.get_global_attribute("global_seed_generator")
            if seed_generator is not None:
                state["keras_seed_generator"] = np.array(seed_generator.state.numpy())
        return state or None

    def set_rng_state(self, state: Any) -> None:
        """Restore what `get_rng_state` returned."""
        if not isinstance(state, dict):
            raise ValueError(f"The tf random state should be a dict, got {type(state).__name__}")
        if "tf_generator" in state:
            saved = state["tf_generator"]
            generator = tf.random.get_global_generator()
            if int(generator.algorithm) == int(saved["algorithm"]):
                generator.reset(np.asarray(saved["state"]))  # in place: traced functions keep their reference
            else:
                tf.random.set_global_generator(tf.random.Generator.from_state(np.asarray(saved["state"]),
                                                                              saved["algorithm"]))
        if "keras_seed_generator" in state and not KERAS2:
            from keras.src.random.seed_generator import global_seed_generator  # pylint: disable=import-outside-toplevel
            global_seed_generator().state.assign(np.asarray(state["keras_seed_generator"]))

    def get_update_state(self, op: Any) -> Dict[str, Any]:
        """The gradient-accumulation state of an `UpdateOp(merge_grad=n)` as plain data (for checkpoints).

        Returns:
            `{"count": steps seen, "accumulators": [numpy arrays]}` (each accumulator summed over replicas), or {}
            before the op has run.
        """
        backend_state = op.fe_backend_state
        if "count" not in backend_state:
            return {}
        saved: Dict[str, Any] = {"count": int(backend_state["count"])}
        if "accumulators" in backend_state:
            saved["accumulators"] = [np.array(variable.numpy()) for variable in backend_state["accumulators"]]
        return saved

    def set_update_state(self, op: Any, saved: Dict[str, Any]) -> None:
        """Restore what `get_update_state` returned (the accumulators are created first if needed).

        Raises:
            ValueError: If the saved accumulators do not match the model's trainable variables.
        """
        if not saved:
            return
        if "accumulators" in saved:
            prepare_accumulators(op, active_data_parallel_strategy())
            accumulators = op.fe_backend_state["accumulators"]
            if len(accumulators) != len(saved["accumulators"]) or any(
                    tuple(variable.shape) != np.shape(value)
                    for variable, value in zip(accumulators, saved["accumulators"])):
                raise ValueError(f"Saved gradient accumulators of UpdateOp for model "
                                 f"{getattr(op.model, 'model_name', '?')!r} do not match its trainable variables")
            for variable, value in zip(accumulators, saved["accumulators"]):
                variable.assign(value)
        op.fe_backend_state["count"] = int(saved["count"])

    def state_reducers(self) -> List[StateReducer]:
        """Reducers for tf objects in trace/op state: MirroredStrategy (stored as nothing, restored as the strategy
        active at load time), tf.Variable (restored in place, so a variable shared by a trace and an op stays shared)
        and tf.Tensor (stored as a numpy array with its dtype)."""
        return [MIRRORED_STRATEGY_REDUCER, TF_VARIABLE_REDUCER, TF_TENSOR_REDUCER]

    def default_device(self) -> Any:
        """None: TensorFlow places tensors itself."""
        return None



from fe_tf.tensorop import register_kernels  # noqa: E402  (kernels of the TensorOps beyond fe_tf.kernels)
register_kernels(TFBackend)
