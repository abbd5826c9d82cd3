"""Running a step's slicers together: checking they don't collide, cutting a batch, fusing the results back.

The Network calls these on numpy data:

    sanity_assert_slicers(slicers)                                     # once per (mode, epoch, ds_id)
    minibatches = forward_slicers(slicers, batch, tensors=backend)     # every step
    ... run the TensorOps on each minibatch, convert its predictions to numpy, merge them into the minibatch ...
    batch = reverse_slicers(slicers, results, batch, tensors=backend)  # then postprocessing ops and traces see it

Called by user code, they work on numpy arrays, torch tensors or tf tensors and return what they were given. With
`tensors` (a backend), the data is numpy and a user's own `_slice_batch` / `_unslice_batch` is handed that backend's
host tensors (it may use framework ops, as in FastEstimator) and its results come back as numpy.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from fe_core.export import fe_export
from fe_core.framework.base import Backend
from fe_core.framework.public import PUBLIC_DEVICE
from fe_core.slicer.slicer import Slicer, is_builtin_kernel

__all__ = ["sanity_assert_slicers", "forward_slicers", "reverse_slicers"]


@fe_export("fe.slicer.slicer.sanity_assert_slicers")
def sanity_assert_slicers(slicers: Sequence[Slicer]) -> None:
    """Check that the slicers running together do not interfere with each other.

    Args:
        slicers: The slicers that run in one (mode, epoch, ds_id).

    Raises:
        ValueError: If two slicers slice the same key, two slicers un-slice the same key, or keys are un-sliced while
            no slicer slices anything.

    Example:
        >>> from fe_core.slicer import AxisSlicer, MeanUnslicer
        >>> sanity_assert_slicers([AxisSlicer(axis=1, slice="x"), MeanUnslicer("loss")])  # fine
        >>> clashing = [AxisSlicer(axis=1, slice="x"), AxisSlicer(axis=2, slice="x")]
        >>> sanity_assert_slicers(clashing)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Two slicers slice key 'x' in the same step: AxisSlicer(axis=1, ...) and AxisSlicer(axis=2, ...)
    """
    slicer_of_sliced: Dict[str, Slicer] = {}
    slicer_of_unsliced: Dict[str, Slicer] = {}
    for slicer in slicers:
        for owners, keys, verb in ((slicer_of_sliced, slicer.slice_inputs, "slice"),
                                   (slicer_of_unsliced, slicer.unslice_inputs, "un-slice")):
            for key in keys:
                other = owners.get(key)
                if other is not None and other is not slicer:
                    raise ValueError(f"Two slicers {verb} key {key!r} in the same step: {other!r} and {slicer!r}")
                owners[key] = slicer
    if slicer_of_unsliced and not slicer_of_sliced:
        unslicers = list(dict.fromkeys(slicer_of_unsliced.values()))
        raise ValueError(f"Slicers {unslicers} un-slice keys {sorted(slicer_of_unsliced)}, but no slicer slices "
                         "anything in the same step, so there is nothing to un-slice")


@fe_export("fe.slicer.slicer.forward_slicers")
def forward_slicers(slicers: Sequence[Slicer], data: Mapping[str, Any], *,
                    tensors: Optional[Backend] = None) -> List[Dict[str, Any]]:
    """Cut a batch into minibatches with every slicer that slices.

    Each minibatch holds its piece of every sliced key, plus every key no slicer cuts, shared unchanged (the same
    object) by all minibatches. When no slicer slices anything, the batch is one minibatch.

    Args:
        slicers: The slicers of this step.
        data: The batch (numpy arrays, torch tensors or tf tensors).
        tensors: For numpy data, the backend whose host tensors a user's own `_slice_batch` is handed (fe-specific;
            the Network passes its backend). None: every slicer gets `data`'s values as they are.

    Returns:
        The minibatches, in order.

    Raises:
        KeyError: If a slicer's key is missing from the batch.
        ValueError: If the slicers cut the batch into different numbers of minibatches, or a key cannot be sliced.

    Example:
        >>> import numpy as np
        >>> from fe_core.slicer import SlidingSlicer
        >>> batch = {"x": np.arange(10).reshape(5, 2), "lr": 0.1}
        >>> minibatches = forward_slicers([SlidingSlicer([2, -1], pad_mode="partial", slice="x")], batch)
        >>> [m["x"].shape[0] for m in minibatches], minibatches[2]["lr"]
        ([2, 2, 1], 0.1)
    """
    minibatches: List[Dict[str, Any]] = []
    first_slicer: Slicer
    sliced_keys = set()
    for slicer in slicers:
        if not slicer.slice_inputs:
            continue
        missing = [key for key in slicer.slice_inputs if key not in data]
        if missing:
            raise KeyError(f"{slicer!r} slices key(s) {missing}, which the batch does not have; batch keys: "
                           f"{sorted(data)}")
        inputs = tuple(data[key] for key in slicer.slice_inputs)
        if tensors is not None and not is_builtin_kernel(slicer, "_slice_batch"):
            pieces = tensors.to_numpy(slicer.slice_batches(tensors.to_tensor(inputs, PUBLIC_DEVICE)))
        else:
            pieces = slicer.slice_batches(inputs)
        if not minibatches:
            minibatches = [dict(zip(slicer.slice_inputs, piece)) for piece in pieces]
            first_slicer = slicer
        elif len(pieces) != len(minibatches):
            raise ValueError(f"Slicers cut the batch into different numbers of minibatches: {first_slicer!r} made "
                             f"{len(minibatches)} and {slicer!r} made {len(pieces)}; every slicer of a step must "
                             "make the same number")
        else:
            for minibatch, piece in zip(minibatches, pieces):
                minibatch.update(zip(slicer.slice_inputs, piece))
        sliced_keys.update(slicer.slice_inputs)
    if not sliced_keys:
        return [dict(data)]
    shared = {key: value for key, value in data.items() if key not in sliced_keys}
    if shared:
        for minibatch in minibatches:
            minibatch.update(shared)
    return minibatches


@fe_export("fe.slicer.slicer.reverse_slicers")
def reverse_slicers(slicers: Sequence[Slicer], data: Sequence[Mapping[str, Any]],
                    original_data: Mapping[str, Any], *, tensors: Optional[Backend] = None) -> Dict[str, Any]:
    """Fuse processed minibatches back into one batch.

    Every key a slicer un-slices and the minibatches hold is fused by that slicer (a declared key the minibatches do
    not hold is skipped: nobody reads it this step). Every other key of the minibatches takes its value from
    `original_data` when it is there (so a sliced key nobody un-slices comes back whole), or else from the first
    minibatch.

    Args:
        slicers: The slicers of this step.
        data: The minibatches after the ops ran, predictions included (numpy arrays, torch or tf tensors).
        original_data: The batch before slicing.
        tensors: For numpy data, the backend whose host tensors a user's own `_unslice_batch` is handed (fe-specific;
            the Network passes its backend). None: every slicer gets the values as they are.

    Returns:
        The fused batch (empty when `data` is empty).

    Example:
        >>> import numpy as np
        >>> from fe_core.slicer import AxisSlicer, MeanUnslicer
        >>> slicers = [AxisSlicer(axis=0, slice="x"), MeanUnslicer("loss")]
        >>> batch = {"x": np.arange(3.0)}
        >>> results = [dict(m, loss=m["x"] * 2) for m in forward_slicers(slicers, batch)]
        >>> fused = reverse_slicers(slicers, results, batch)
        >>> fused["x"].tolist(), float(fused["loss"])
        ([0.0, 1.0, 2.0], 2.0)
    """
    if not data:
        return {}
    first = data[0]
    fused: Dict[str, Any] = {}
    for slicer in slicers:
        for key in slicer.unslice_inputs:
            if key in first:
                fused[key] = _unslice(slicer, tuple(minibatch[key] for minibatch in data), key, tensors)
    for key in first:
        if key not in fused:
            fused[key] = original_data[key] if key in original_data else first[key]
    return fused


def _unslice(slicer: Slicer, slices: Tuple[Any, ...], key: str, tensors: Optional[Backend]) -> Any:
    if tensors is not None and not is_builtin_kernel(slicer, "_unslice_batch"):
        return tensors.to_numpy(slicer.unslice_batches(tensors.to_tensor(slices, PUBLIC_DEVICE), key=key))
    return slicer.unslice_batches(slices, key=key)
