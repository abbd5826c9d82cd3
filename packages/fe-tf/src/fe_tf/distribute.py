"""`tf.distribute.MirroredStrategy` support: splitting batches over replicas, merging their results, and the
checkpoint reducer that stores a strategy as "the strategy active at load time". And data-parallel training over
several machines or processes: `tf.distribute.MultiWorkerMirroredStrategy`, configured by `TF_CONFIG`.

Several workers: when `TF_CONFIG` names more than one worker (and chief) and the script set no strategy of its own,
`build` makes a `MultiWorkerMirroredStrategy` the global strategy before the models are created (TensorFlow requires
it before the first TensorFlow op runs: build your models with `fe.build` before running other TensorFlow code, or
create the strategy yourself at the top of the script). Each worker's Pipeline then takes its part of every global
batch (`fe_core.distributed.sharding`), splits it over its local replicas, and the strategy's collectives reduce the
gradients over all workers; a `TFCommunicator` built on the same collectives reduces metrics and checkpoint state.

A MirroredStrategy is used when one is active: set by `build` on a machine with several GPUs (as FastEstimator does),
or by the user (`tf.distribute.experimental_set_strategy(...)` or `with strategy.scope():` around `build`). Batches are
cut into one contiguous chunk per replica; predictions come back concatenated in the original order and scalars (losses)
are averaged over the replicas weighted by their samples (the whole batch's mean, as on one device), ignoring NaN. A batch smaller than the number of replicas is filled by repeating its
samples and trimmed back afterwards, so no replica ever gets an empty batch.

Example:
    >>> # tf.distribute.experimental_set_strategy(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    >>> # model = fe.build(model_fn=LeNet, optimizer_fn="adam")   # variables are mirrored  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

import json
import os

import numpy as np
import tensorflow as tf

from fe_core.distributed.communicator import Communicator, set_communicator
from fe_core.framework import StateReducer

__all__ = ["MIRRORED_STRATEGY_REDUCER", "active_mirrored_strategy", "is_mirrored_strategy", "ensure_multi_gpu_strategy",
           "batch_size_of", "fill_batch", "distribute_batch", "replica_samples", "merge_replica_results",
           "trim_results", "active_data_parallel_strategy", "local_replicas", "tf_config_workers", "ensure_multi_worker_strategy",
           "TFCommunicator"]


def is_mirrored_strategy(strategy: Any) -> bool:
    """Whether `strategy` is a `tf.distribute.MirroredStrategy`."""
    return isinstance(strategy, tf.distribute.MirroredStrategy)


def active_mirrored_strategy() -> Optional[tf.distribute.MirroredStrategy]:
    """The MirroredStrategy in force (set globally or entered with `strategy.scope()`), else None."""
    strategy = tf.distribute.get_strategy()
    return strategy if is_mirrored_strategy(strategy) else None


def active_data_parallel_strategy() -> Optional[tf.distribute.Strategy]:
    """The MirroredStrategy or MultiWorkerMirroredStrategy in force, else None."""
    strategy = tf.distribute.get_strategy()
    if is_mirrored_strategy(strategy) or isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return strategy
    return None


def local_replicas(strategy: tf.distribute.Strategy) -> int:
    """How many replicas run in this process (all of them for a MirroredStrategy; this worker's for several)."""
    return len(strategy.extended.worker_devices)


def tf_config_workers(environ: Optional[Mapping[str, str]] = None) -> Optional[Tuple[int, int]]:
    """(number of workers, this worker's rank) from `TF_CONFIG` (the chief, if any, is rank 0), or None when it
    names fewer than two workers.

    Raises:
        ValueError: If TF_CONFIG is not valid JSON or this task is not among the workers.

    Example:
        >>> tf_config_workers({"TF_CONFIG": '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", '
        ...                    '"index": 1}}'})
        (2, 1)
    """
    raw = (os.environ if environ is None else environ).get("TF_CONFIG")
    if not raw:
        return None
    try:
        config = json.loads(raw)
    except ValueError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON: {error}") from error
    cluster = config.get("cluster", {}) or {}
    chiefs, workers = list(cluster.get("chief", [])), list(cluster.get("worker", []))
    if len(chiefs) + len(workers) < 2:
        return None
    task = config.get("task", {}) or {}
    kind, index = task.get("type"), int(task.get("index", 0))
    if kind == "chief":
        return len(chiefs) + len(workers), index
    if kind == "worker":
        return len(chiefs) + len(workers), len(chiefs) + index
    raise ValueError(f"TF_CONFIG names several workers, but this task is {kind!r}; fe trains on 'chief' and "
                     f"'worker' tasks")


class TFCommunicator(Communicator):
    """fe-core's communicator on a MultiWorkerMirroredStrategy's collectives (one entry per worker).

    Collectives run eagerly through `strategy.run` with the replica context's all-reduce (they run once per epoch or
    checkpoint, and at training log steps for the logged losses; never on the other steps). An all-gather is an
    all-reduce of each worker's value placed in its own slot.
    """

    name = "tf"

    def __init__(self, strategy: tf.distribute.Strategy, world_size: int, rank: int) -> None:
        super().__init__(world_size=world_size, rank=rank, local_rank=0)
        self.strategy = strategy

    def _sum(self, value: np.ndarray) -> np.ndarray:
        """The sum over workers (float64), through the strategy's all-reduce."""
        strategy = self.strategy
        local = local_replicas(strategy)
        zeros = np.zeros_like(value)

        def value_fn(context: tf.distribute.experimental.ValueContext) -> tf.Tensor:
            first = context.replica_id_in_sync_group % local == 0  # one contribution per worker
            return tf.constant(value if first else zeros)

        values = strategy.experimental_distribute_values_from_function(value_fn)
        result = strategy.run(lambda x: tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM,
                                                                                       x), args=(values,))
        return strategy.experimental_local_results(result)[0].numpy()

    def _all_reduce(self, array: np.ndarray, op: str) -> np.ndarray:
        if op == "sum":
            return self._sum(array.astype(np.float64)).astype(array.dtype)
        gathered = self._all_gather_equal(array)  # the strategy's collectives only sum: max / min from a gather
        return (gathered.max(axis=0) if op == "max" else gathered.min(axis=0)).astype(array.dtype)

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        slots = np.zeros((self.world_size,) + array.shape, dtype=np.float64)
        slots[self.rank] = array
        return self._sum(slots).astype(array.dtype)

    def barrier(self) -> None:
        self._sum(np.zeros(1))


def ensure_multi_worker_strategy() -> Optional[TFCommunicator]:
    """With `TF_CONFIG` naming several workers and no strategy set, make a MultiWorkerMirroredStrategy the global
    strategy (once) and install its communicator.

    Raises:
        RuntimeError: If TensorFlow already ran an op (the strategy must be created first), with what to do.
    """
    global _worker_communicator  # pylint: disable=global-statement
    if _worker_communicator is not None:
        return _worker_communicator
    workers = tf_config_workers()
    if workers is None:
        return None
    strategy = tf.distribute.get_strategy() if tf.distribute.has_strategy() else None
    if strategy is None:
        try:
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
        except RuntimeError as error:
            raise RuntimeError(f"TF_CONFIG names {workers[0]} workers, but TensorFlow already ran an op, so the "
                               f"MultiWorkerMirroredStrategy cannot be created any more ({error}). Call fe.build "
                               f"before any other TensorFlow code, or create the strategy at the top of the script: "
                               f"tf.distribute.experimental_set_strategy(tf.distribute.MultiWorkerMirroredStrategy())"
                               ) from error
        tf.distribute.experimental_set_strategy(strategy)
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return None  # the script chose another strategy: leave it alone
    _worker_communicator = TFCommunicator(strategy, *workers)
    set_communicator(_worker_communicator)
    return _worker_communicator


_worker_communicator: Optional[TFCommunicator] = None


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
    replicas = local_replicas(strategy)  # several workers: this worker's part is split over its own replicas
    bounds = np.linspace(0, size, replicas + 1).round().astype(int)
    devices = strategy.extended.worker_devices
    batched = {key for key, value in batch.items()
               if getattr(value, "shape", None) is not None and len(value.shape) > 0 and int(value.shape[0]) == size}

    def value_fn(context: tf.distribute.experimental.ValueContext) -> Dict[str, Any]:
        replica = context.replica_id_in_sync_group % replicas
        start, stop = bounds[replica], bounds[replica + 1]
        with tf.device(devices[replica]):
            return {key: tf.convert_to_tensor(value[start:stop] if key in batched else value)
                    for key, value in batch.items()}

    return strategy.experimental_distribute_values_from_function(value_fn)


def _nan_mean(values: Tuple[Any, ...], weights: Any = None) -> Any:
    """The mean of the replicas' scalars ignoring NaN, weighted by `weights` (each replica's samples) when given."""
    stacked = tf.stack([tf.cast(value, tf.float32) if not value.dtype.is_floating else value for value in values])
    finite = tf.logical_not(tf.math.is_nan(stacked))
    counts = tf.ones_like(stacked) if weights is None else tf.cast(weights, stacked.dtype)
    counts = tf.where(finite, counts, tf.zeros_like(counts))
    total = tf.reduce_sum(tf.where(finite, stacked * counts, tf.zeros_like(stacked)))
    return total / tf.reduce_sum(counts)


def replica_samples(size: int, replicas: int) -> np.ndarray:
    """How many samples of a batch of `size` each of `replicas` replicas gets from `distribute_batch` (float32).

    Example:
        >>> replica_samples(5, 2).tolist()
        [2.0, 3.0]
    """
    return np.diff(np.linspace(0, size, replicas + 1).round()).astype(np.float32)


def merge_replica_results(strategy: tf.distribute.Strategy, results: Any, weights: Any = None) -> Any:
    """Merge what `strategy.run` returned: tensors are concatenated on the batch axis, scalars averaged ignoring NaN
    (weighted by each replica's samples, `weights`, when given: a loss is then the whole batch's mean, as on one
    device, when the replicas' chunks differ in size).

    Works eagerly and inside a `tf.function`. Dicts, lists and tuples are merged recursively; non-tensor values are
    taken from the first replica.
    """
    if isinstance(results, dict):
        return {key: merge_replica_results(strategy, value, weights) for key, value in results.items()}
    if isinstance(results, (list, tuple)) and not isinstance(results, tf.distribute.DistributedValues):
        return type(results)(merge_replica_results(strategy, value, weights) for value in results)
    values = strategy.experimental_local_results(results)
    first = values[0]
    if not isinstance(first, (tf.Tensor, tf.Variable)) or not hasattr(first, "shape"):
        return first
    if len(values) == 1:
        return first
    if first.shape.rank == 0:
        return _nan_mean(values, weights)
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
