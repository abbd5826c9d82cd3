"""`enable_deterministic`: seed every random number generator fe uses, including backends loaded later."""
from __future__ import annotations

import os
import random
from typing import Callable, List, Optional

import numpy as np
from fe_core.export import fe_export

__all__ = ["enable_deterministic", "deterministic_seed", "on_seed"]

_seed: Optional[int] = None
_listeners: List[Callable[[int], None]] = []


def on_seed(listener: Callable[[int], None]) -> None:
    """Call `listener(seed)` whenever `enable_deterministic` runs (the backend registry seeds loaded backends so).

    Keeps this module at the bottom of the layers: it knows nothing of backends, they subscribe to it.
    """
    _listeners.append(listener)


@fe_export("fe.estimator.enable_deterministic", "fe.enable_deterministic")
def enable_deterministic(seed: int) -> None:
    """Make runs repeatable: seed python's `random`, numpy's global generator and every backend.

    Backends that are not loaded yet are seeded (and switched to deterministic kernels where their framework allows)
    when they load, so calling this at the top of a script, before any model is built, is enough.

    Args:
        seed: The seed.

    Example:
        >>> enable_deterministic(42)
        >>> a = np.random.rand(); enable_deterministic(42); a == np.random.rand()
        True
    """
    global _seed  # pylint: disable=global-statement
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"enable_deterministic needs an integer seed, got {seed!r}")
    _seed = seed
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    for listener in list(_listeners):
        listener(seed)


def deterministic_seed() -> Optional[int]:
    """The seed given to `enable_deterministic`, or None if it was not called."""
    return _seed
