"""Cross-rank reductions of the statistics traces keep: the one place metrics and logged means become global.

A metric's sufficient statistics (sums, counts, confusion matrices, per-sample arrays) combine across ranks by the
same rule they combine across batches. These helpers move them with the active `Communicator` (one collective per
call, every rank calling) and hand back every rank's part, which the metric then merges with its own rule - so the
value a distributed run logs is the value one process computes from the same samples.
"""
from __future__ import annotations

import io
import json
from typing import Any, Dict, List, Mapping, MutableMapping, Optional, Sequence, Tuple

import numpy as np

from fe_core.distributed.communicator import Communicator, get_communicator

__all__ = ["all_gather_arrays", "gather_stats", "weighted_means", "batch_scalar_means"]


def _pack(arrays: Mapping[str, np.ndarray]) -> bytes:
    names = list(arrays)
    buffer = io.BytesIO()
    payload = {f"a{index}": np.asarray(arrays[name]) for index, name in enumerate(names)}
    np.savez(buffer, __names__=np.array(json.dumps(names)), **payload)
    return buffer.getvalue()


def _unpack(blob: bytes) -> Dict[str, np.ndarray]:
    with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
        names = json.loads(str(archive["__names__"]))
        return {name: archive[f"a{index}"] for index, name in enumerate(names)}


def all_gather_arrays(arrays: Mapping[str, np.ndarray],
                      communicator: Optional[Communicator] = None) -> List[Dict[str, np.ndarray]]:
    """Every rank's dict of named arrays, in rank order (names, shapes and dtypes may differ between ranks).

    Example:
        >>> all_gather_arrays({"n": np.array(3)})[0]["n"].item()
        3
    """
    comm = communicator or get_communicator()
    if comm.world_size == 1:
        return [{name: np.asarray(value) for name, value in arrays.items()}]
    return [_unpack(blob) for blob in comm.all_gather_bytes(_pack(arrays))]


def gather_stats(stats: Mapping[str, Mapping[str, np.ndarray]],
                 communicator: Optional[Communicator] = None) -> Dict[str, List[Dict[str, np.ndarray]]]:
    """Every rank's statistics per ds_id: {ds_id: [the statistics of each rank that has that ds_id]}.

    Args:
        stats: This rank's {ds_id: {statistic name: array}} (lists of batch arrays must be joined first).
        communicator: The communicator (default: the active one).
    """
    flat = {json.dumps([ds_id, name]): np.asarray(value) for ds_id, named in stats.items()
            for name, value in named.items()}
    # a ds_id with no statistic still has to reach the others (it was seen, with nothing to count)
    flat.update({json.dumps([ds_id, None]): np.zeros(0) for ds_id, named in stats.items() if not named})
    parts: Dict[str, List[Dict[str, np.ndarray]]] = {}
    for rank_arrays in all_gather_arrays(flat, communicator):
        per_ds: Dict[str, Dict[str, np.ndarray]] = {}
        for key, value in rank_arrays.items():
            ds_id, name = json.loads(key)
            named = per_ds.setdefault(ds_id, {})
            if name is not None:
                named[name] = value
        for ds_id, named in per_ds.items():
            parts.setdefault(ds_id, []).append(named)
    return parts


def weighted_means(sums: Sequence[Tuple[str, np.ndarray, float]],
                   communicator: Optional[Communicator] = None) -> List[np.ndarray]:
    """Global sample-weighted means from each rank's (name, sum of value * samples, samples), every rank listing
    the same names in the same order.

    Returns:
        For each entry, (sum over ranks of the weighted sums) / (sum over ranks of the samples).
    """
    comm = communicator or get_communicator()
    if not sums:
        comm.all_reduce(np.zeros(1))  # keep the collectives of every rank in step
        return []
    flat = np.concatenate([np.ravel(np.asarray(total, dtype=np.float64)) for _, total, _ in sums]
                          + [np.array([count for _, _, count in sums], dtype=np.float64)])
    reduced = comm.all_reduce(flat, "sum")
    means, offset = [], 0
    counts = reduced[-len(sums):]
    for index, (_, total, _) in enumerate(sums):
        shape = np.shape(total)
        size = int(np.prod(shape)) if shape else 1
        part = reduced[offset:offset + size].reshape(shape)
        offset += size
        means.append(part / counts[index] if counts[index] else part * np.nan)
    return means



def _float_scalar(value: Any) -> bool:
    """Whether `value` is one floating-point number (a per-batch mean such as a loss), not a per-sample array."""
    if isinstance(value, float):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and getattr(dtype, "kind", "") == "f" and np.ndim(value) == 0


def batch_scalar_means(values: MutableMapping[str, Any], keys: Sequence[str], samples: int,
                       communicator: Optional[Communicator] = None) -> None:
    """Replace each rank's per-batch means of `keys` in `values` by the whole global batch's: the sum over ranks of
    (this rank's mean * this rank's samples) / the sum over ranks of samples. That is the value one process gets on
    the global batch (a loss averaged over the batch's samples), whatever the number of ranks.

    One collective (a sum of `len(keys) + 1` numbers), so every rank must call it at the same steps with the same
    `keys` in the same order. Only the keys present in `values` holding one floating-point number are combined
    (every rank's network produces the same keys with the same types); per-sample arrays and integers are left as
    they are. Each combined value keeps its type (a numpy scalar or 0-d array of its own dtype, or a float).

    Args:
        values: This rank's values of the step (changed in place).
        keys: The monitored keys to combine, in the same order on every rank.
        samples: How many samples this rank's part of the global batch has.
        communicator: The communicator (default: the active one).

    Example:
        >>> step = {"ce": np.float32(0.5)}
        >>> batch_scalar_means(step, ["ce"], samples=4)  # one process: the value stays as it is
        >>> float(step["ce"])
        0.5
    """
    comm = communicator or get_communicator()
    if comm.world_size == 1:
        return
    names = [key for key in keys if key in values and _float_scalar(values[key])]
    flat = np.array([float(values[name]) * samples for name in names] + [samples], dtype=np.float64)
    reduced = comm.all_reduce(flat, "sum")
    total = reduced[-1]
    for name, weighted in zip(names, reduced[:-1]):
        mean = weighted / total if total else np.nan
        value = values[name]
        if isinstance(value, float) and not isinstance(value, np.generic):
            values[name] = float(mean)
        else:
            combined = np.asarray(mean, dtype=value.dtype)
            values[name] = combined if isinstance(value, np.ndarray) else combined[()]
