"""Ready-made models (FastEstimator's `fastestimator.architecture`): `pytorch` and `tensorflow`.

Each subpackage imports its framework, so neither is imported until touched: `fe.architecture.pytorch.LeNet` (or
`import fe.architecture.pytorch`) imports torch only, `fe.architecture.tensorflow` TensorFlow only.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    from fe.architecture import pytorch, tensorflow

_SUBPACKAGES = ("pytorch", "tensorflow")

__all__ = ["pytorch", "tensorflow"]


def __getattr__(name: str) -> Any:
    """Import `pytorch` / `tensorflow` on first access (PEP 562)."""
    if name in _SUBPACKAGES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'fe.architecture' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_SUBPACKAGES))
