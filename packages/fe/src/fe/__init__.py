"""fe: FastEstimator-style deep learning on TensorFlow and PyTorch.

A FastEstimator 1.x script runs with `import fe` in place of `import fastestimator as fe`: the same names live at the
same dotted paths (`fe.Estimator`, `fe.op.tensorop.model.ModelOp`, `fe.trace.metric.Accuracy`, ...).

Importing `fe` is cheap and imports no framework: the top-level names and the subpackages are loaded on first access
(`fe.Pipeline`, `fe.trace`, ...), and a backend (torch or TensorFlow) is imported only when a model of its framework
is built or one of its architectures is touched (`fe.architecture.pytorch`).

Example:
    >>> import fe
    >>> fe.Pipeline.__name__
    'Pipeline'
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, List

from fe.__about__ import __version__

if TYPE_CHECKING:  # what the lazy attributes below resolve to, for type checkers and IDEs
    from fe import (architecture, cli, dataset, estimator, examples, network, op, pipeline, schedule, slicer, summary,
                    trace)
    from fe.estimator import Estimator, enable_deterministic
    from fe.network import Network, build
    from fe.pipeline import Pipeline

# Top-level names -> the fe module that defines them (as in FastEstimator 1.x).
_ATTRIBUTES: Dict[str, str] = {
    "Estimator": "fe.estimator",
    "enable_deterministic": "fe.estimator",
    "Network": "fe.network",
    "build": "fe.network",
    "Pipeline": "fe.pipeline",
}
# Subpackages and modules reachable as attributes (`fe.trace.metric.Accuracy`).
_SUBMODULES: List[str] = ["architecture", "cli", "dataset", "estimator", "examples", "network", "op", "pipeline",
                          "schedule", "slicer", "summary", "trace"]

__all__ = ["__version__", "Estimator", "Network", "Pipeline", "build", "enable_deterministic", "architecture", "cli",
           "dataset", "estimator", "examples", "network", "op", "pipeline", "schedule", "slicer", "summary", "trace"]


def __getattr__(name: str) -> Any:
    """Load a top-level name or a subpackage on first access (PEP 562), then cache it in the module."""
    if name in _ATTRIBUTES:
        value = getattr(importlib.import_module(_ATTRIBUTES[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'fe' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_ATTRIBUTES) | set(_SUBMODULES))
