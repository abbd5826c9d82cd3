"""Refuse to train when the processes of a data-parallel run built different datasets.

Every process of a `torchrun` or multi-worker TensorFlow run executes the whole script, so each builds its own
datasets; fe then gives each process its part of every epoch's samples, which is only right if all processes hold the
same datasets. Randomness while building them (an unseeded `split`, a `np.random.shuffle` of the arrays, a per-rank
seed) silently gives each process different data: eval and test sets that differ per process, overlapping another
process's training data, and metrics that are wrong without an error. Before `fit` and `test`, the Estimator
compares a cheap fingerprint of every dataset across the processes (its length and a hash of a few samples) and
refuses to start, naming the dataset, when they differ.

Example:
    >>> from fe_core.dataset import NumpyDataset
    >>> a = dataset_fingerprint(NumpyDataset({"x": np.arange(10)}))
    >>> a == dataset_fingerprint(NumpyDataset({"x": np.arange(10)}))
    True
    >>> a == dataset_fingerprint(NumpyDataset({"x": np.arange(1, 11)}))
    False
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from fe_core.distributed.communicator import Communicator, get_communicator

__all__ = ["DatasetMismatchError", "dataset_fingerprint", "check_datasets_agree"]

_SAMPLES = 5  # how many samples the hash reads (first, last and evenly between)


class DatasetMismatchError(ValueError):
    """The processes of a data-parallel run hold different datasets."""


def _hash_value(digest: Any, value: Any) -> None:
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            digest.update(repr(key).encode())
            _hash_value(digest, value[key])
        return
    if isinstance(value, (list, tuple)):
        digest.update(f"[{len(value)}".encode())
        for item in value:
            _hash_value(digest, item)
        return
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        digest.update(repr(value).encode())
        return
    try:
        array = np.asarray(value)
    except Exception:  # pylint: disable=broad-except  (an object numpy cannot read: its type is what we know)
        digest.update(type(value).__qualname__.encode())
        return
    if array.dtype == object:
        digest.update(repr(array.tolist()).encode())
    else:
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())


def _item_hash(dataset: Any, index: int) -> str:
    digest = hashlib.sha256()
    _hash_value(digest, dataset[index])
    return digest.hexdigest()


def dataset_fingerprint(dataset: Any) -> Dict[str, Any]:
    """A cheap summary of `dataset` that differs when two processes built different data.

    Args:
        dataset: A dataset (`__len__` and `__getitem__`), or anything else (then only its type is recorded).

    Returns:
        {"type", "length", "hash"}: the hash covers a few samples (None when reading them failed or when reading the
        same sample twice gave different values, i.e. the dataset draws its samples at random).
    """
    fingerprint: Dict[str, Any] = {"type": type(dataset).__qualname__, "length": None, "hash": None}
    try:
        length = len(dataset)
    except Exception:  # pylint: disable=broad-except  (a framework loader, a generator: nothing cheap to compare)
        return fingerprint
    fingerprint["length"] = int(length)
    if length <= 0 or not hasattr(dataset, "__getitem__"):
        return fingerprint
    indices = sorted({int(round(i * (length - 1) / (_SAMPLES - 1))) for i in range(_SAMPLES)})
    try:
        hashes = [_item_hash(dataset, index) for index in indices]
        if _item_hash(dataset, indices[0]) != hashes[0]:
            return fingerprint  # samples are drawn at random on access: only the length can be compared
    except Exception:  # pylint: disable=broad-except  (an item that cannot be read here fails later, with context)
        return fingerprint
    fingerprint["hash"] = hashlib.sha256("".join(hashes).encode()).hexdigest()[:12]
    return fingerprint


def _datasets(pipeline: Any, modes: Iterable[str]) -> List[Tuple[str, str, int, Any]]:
    """(mode, ds_id, index among a Scheduler's values, dataset) for every dataset of `modes`."""
    found = []
    data: Dict[str, Dict[str, Any]] = getattr(pipeline, "data", None) or {}
    for mode in sorted(set(modes) & set(data)):
        for ds_id, dataset in sorted(data[mode].items()):
            values = dataset.get_all_values() if callable(getattr(dataset, "get_all_values", None)) else [dataset]
            for index, value in enumerate(values):
                if value is not None:
                    found.append((mode, ds_id, index, value))
    return found


def check_datasets_agree(pipeline: Any, modes: Iterable[str], action: str = "fit",
                         communicator: Optional[Communicator] = None) -> None:
    """Raise when the processes of a data-parallel run hold different datasets for `modes` (every rank calls this).

    Args:
        pipeline: The Pipeline.
        modes: The modes about to run ('train', 'eval' for fit; 'test' for test).
        action: What is refused ('fit' or 'test'), for the message.
        communicator: The processes (default: the active communicator). A single process checks nothing.

    Raises:
        DatasetMismatchError: Naming the first dataset (mode and ds_id) whose fingerprint differs, on every rank.
    """
    communicator = communicator or get_communicator()
    if communicator.world_size == 1:
        return
    datasets = _datasets(pipeline, modes)
    local = [[mode, ds_id, index, dataset_fingerprint(dataset)] for mode, ds_id, index, dataset in datasets]
    gathered = [json.loads(blob.decode()) for blob in communicator.all_gather_bytes(json.dumps(local).encode())]
    if all(ranks == gathered[0] for ranks in gathered[1:]):
        return
    differing = []
    for position, (mode, ds_id, index, _) in enumerate(datasets):
        per_rank = [ranks[position][3] if position < len(ranks) else None for ranks in gathered]
        if all(item == per_rank[0] for item in per_rank[1:]):
            continue
        name = f"{mode}_data" + (f" {ds_id!r}" if ds_id else "") + (f" (scheduled dataset {index + 1})"
                                                                     if index else "")
        described = "; ".join(
            f"rank {rank}: " + ("no such dataset" if item is None else
                                f"{item['length']} samples, fingerprint {item['hash'] or 'n/a'}")
            for rank, item in enumerate(per_rank))
        differing.append(f"{name} ({described})")
    if differing:
        raise DatasetMismatchError(
            f"{action} refuses to start: the Pipeline's {' and '.join(differing)} "
            f"{'differs' if len(differing) == 1 else 'differ'} between the {communicator.world_size} processes of "
            f"this data-parallel run. Every process runs the script and must build the same datasets: give random "
            f"choices made while building them a seed (e.g. eval_data.split(0.5, seed=0), np.random.seed(0) before "
            f"shuffling arrays), and do not build data from the process's rank.")
    raise DatasetMismatchError(f"{action} refuses to start: the processes of this data-parallel run have different "
                               f"datasets (different modes or ds_ids): " +
                               "; ".join(f"rank {rank}: {[entry[:2] for entry in ranks]}"
                                         for rank, ranks in enumerate(gathered)))
