"""Random-number-generator state for checkpoints: python's `random`, numpy's global generator and every backend's.

Saving and restoring it makes a resumed run draw the same random numbers as an uninterrupted one.

Example:
    >>> import random
    >>> state = capture_rng_state()
    >>> a = random.random()
    >>> restore_rng_state(state)
    >>> a == random.random()
    True
"""
from __future__ import annotations

import random
from typing import Any, Dict

import numpy as np

from fe_core.framework.registry import loaded_backends

__all__ = ["capture_rng_state", "restore_rng_state", "check_rng_state"]


def capture_rng_state() -> Dict[str, Any]:
    """The current random state.

    Returns:
        `{"python": random.getstate(), "numpy": np.random.get_state(), "backends": {name: state}}` with one entry per
        loaded backend (its `get_rng_state()`).
    """
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "backends": {backend.name: backend.get_rng_state() for backend in loaded_backends()},
    }


def check_rng_state(state: Any) -> None:
    """Check the shape of a saved random state before anything is restored.

    Raises:
        ValueError: If `state` does not look like what `capture_rng_state` returns.
    """
    if not isinstance(state, dict) or not {"python", "numpy", "backends"} <= state.keys():
        raise ValueError("Checkpoint entry 'rng' should hold 'python', 'numpy' and 'backends' random states")
    if not isinstance(state["python"], tuple) or not isinstance(state["numpy"], tuple):
        raise ValueError("Checkpoint entries rng.python and rng.numpy should be tuples")
    if not isinstance(state["backends"], dict):
        raise ValueError("Checkpoint entry rng.backends should be a dict of backend name -> state")


def restore_rng_state(state: Dict[str, Any]) -> None:
    """Restore what `capture_rng_state` returned.

    Backends that are not loaded in this process are skipped (they have no random state to restore yet).

    Raises:
        ValueError: If the saved state is malformed.
    """
    check_rng_state(state)
    try:
        random.setstate(state["python"])
        np.random.set_state(state["numpy"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"Checkpoint holds a malformed python/numpy random state: {error}") from error
    loaded = {backend.name: backend for backend in loaded_backends()}
    for name, backend_state in state["backends"].items():
        if name in loaded and backend_state is not None:
            loaded[name].set_rng_state(backend_state)
