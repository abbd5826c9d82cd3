"""`tf.distribute.MirroredStrategy` support: splitting batches over replicas, merging their results, and the
checkpoint reducer that stores a strategy as "the strategy active at load time".

A MirroredStrategy is used when one is active: set by `build` on a machine with several GPUs (as FastEstimator does),
or by the user (`tf.distribute.experimental_set_strategy(...)` or `with strategy.scope():` around `build`). Batches are
cut into one contiguous chunk per replica; predictions come back concatenated in the original order and scalars (losses)
are averaged over the replicas, ignoring NaN. A batch smaller than the number of replicas is filled by repeating its
samples and trimmed back afterwards, so no replica ever gets an empty batch.

Example:
    >>> # tf.distribute.experimental_set_strategy(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    >>> # model = fe.build(model_fn=LeNet, optimizer_fn="adam")   # variables are mirrored  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np
import tensorflow as tf

from fe_core.framework import StateReducer

__all__ = ["MIRRORED_STRATEGY_REDUCER", "active_mirrored_strategy", "is_mirrored_strategy", "ensure_multi_gpu_strategy",
           "batch_size_of", "fill_batch", "distribute_batch", "merge_replica_results", "trim_results"]


def is_mirrored_strategy(strategy: Any) -> bool:
    """Whether `strategy` is a `tf.distribute.MirroredStrategy`."""
    return isinstance(strategy, tf.distribute.MirroredStrategy)


def active_mirrored_strategy() -> Optional[tf.distribute.MirroredStrategy]:
    """The MirroredStrategy in force (set globally or entered with `strategy.scope()`), else None."""
    strategy = tf.distribute.get_strategy()
    return strategy if is_mirrored_strategy(strategy) else None


def ensure_multi_gpu_strategy() -> None:
    """On a machine with more than one GPU, make a MirroredStrategy over all of them the global strategy (once).

    Nothing changes on CPU-only or single-GPU machines, or when any non-default strategy is already in force.
    """
    if tf.distribute.has_strategy() or len(tf.config.list_logical_devices("GPU")) < 2:
        return
    tf.distribute.experimental_set_strategy(tf.distribute.MirroredStrategy())


def batch_size_of(batch: Mapping[str, Any]) -> int:
    """The batch size: the first axis of the first value that has one (0 when no value is batched)."""
    for value in batch.values():
        shape = getattr(value, "shape", None)
        if shape is not None and len(shape) > 0:
            return int(shape[0])
    return 0


def fill_batch(batch: Mapping[str, Any], size: int, target: int) -> Dict[str, Any]:
    """Repeat the samples of a batch of `size` (cyclically) until it holds `target` samples.

    Values without the batch axis are kept as they are.
    """
    if size == 0:
        raise ValueError(f"Cannot distribute an empty batch over {target} replicas")
    indices = np.arange(target) % size
    filled = {}
    for key, value in batch.items():
        shape = getattr(value, "shape", None)
        if shape is not None and len(shape) > 0 and int(shape[0]) == size:
            filled[key] = tf.gather(value, indices) if isinstance(value, tf.Tensor) else np.asarray(value)[indices]
        else:
            filled[key] = value
    return filled


def distribute_batch(strategy: tf.distribute.Strategy, batch: Mapping[str, Any], size: int) -> Any:
    """Split a batch into one contiguous chunk per replica (chunk sizes differ by at most one).

    Args:
        strategy: The strategy.
        batch: numpy arrays (or tensors); values without the batch axis go to every replica whole.
        size: The batch size (at least the number of replicas).

    Returns:
        A dict of per-replica values for `strategy.run`.
    """
    replicas = strategy.num_replicas_in_sync
    bounds = np.linspace(0, size, replicas + 1).round().astype(int)
    devices = strategy.extended.worker_devices
    batched = {key for key, value in batch.items()
               if getattr(value, "shape", None) is not None and len(value.shape) > 0 and int(value.shape[0]) == size}

    def value_fn(context: tf.distribute.experimental.ValueContext) -> Dict[str, Any]:
        replica = context.replica_id_in_sync_group
        start, stop = bounds[replica], bounds[replica + 1]
        with tf.device(devices[replica]):
            return {key: tf.convert_to_tensor(value[start:stop] if key in batched else value)
                    for key, value in batch.items()}

    return strategy.experimental_distribute_values_from_function(value_fn)


def _nan_mean(values: Tuple[Any, ...]) -> Any:
    stacked = tf.stack([tf.cast(value, tf.float32) if not value.dtype.is_floating else value for value in values])
    finite = tf.logical_not(tf.math.is_nan(stacked))
    total = tf.reduce_sum(tf.where(finite, stacked, tf.zeros_like(stacked)))
    return total / tf.cast(tf.reduce_sum(tf.cast(finite, tf.int32)), stacked.dtype)


def merge_replica_results(strategy: tf.distribute.Strategy, results: Any) -> Any:
    """Merge what `strategy.run` returned: tensors are concatenated on the batch axis, scalars averaged ignoring NaN.

    Works eagerly and inside a `tf.function`. Dicts, lists and tuples are merged recursively; non-tensor values are
    taken from the first replica.
    """
    if isinstance(results, dict):
        return {key: merge_replica_results(strategy, value) for key, value in results.items()}
    if isinstance(results, (list, tuple)) and not isinstance(results, tf.distribute.DistributedValues):
        return type(results)(merge_replica_results(strategy, value) for value in results)
    values = strategy.experimental_local_results(results)
    first = values[0]
    if not isinstance(first, (tf.Tensor, tf.Variable)) or not hasattr(first, "shape"):
        return first
    if len(values) == 1:
        return first
    if first.shape.rank == 0:
        return _nan_mean(values)
    return tf.concat(values, axis=0)


def trim_results(results: Dict[str, Any], size: int, filled: int) -> Dict[str, Any]:
    """Undo `fill_batch` on merged results: keep the first `size` samples of every value batched at `filled`."""
    trimmed = {}
    for key, value in results.items():
        shape = getattr(value, "shape", None)
        if shape is not None and len(shape) > 0 and shape[0] == filled:
            trimmed[key] = value[:size]
        else:
            trimmed[key] = value
    return trimmed


def _reduce_strategy(strategy: Any) -> None:
    return None


def _restore_strategy(data: Any) -> Any:
    return tf.distribute.get_strategy()


MIRRORED_STRATEGY_REDUCER = StateReducer(name="tf.MirroredStrategy",
                                         matches=is_mirrored_strategy,
                                         reduce=_reduce_strategy,
                                         restore=_restore_strategy)
"""Checkpoints store a MirroredStrategy as nothing and restore it as `tf.distribute.get_strategy()` at load time."""
