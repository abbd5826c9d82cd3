"""`fe.Network` and `fe.build`: create a Network for whichever framework owns the models, and build models.

As in FastEstimator 1.x, `Network(ops)` is a factory: it looks at the models inside the ops and returns the Network of
their framework (`TorchNetwork` or `TFNetwork`). It never imports a framework that the models do not use.
"""
from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any, Iterable, List, Union

from fe_core.framework import BackendNotInstalledError, available_backends
from fe_core.build import build
from fe_core.containers import filter_nones, to_list
from fe_core.network import BaseNetwork, collect_models, make_network
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.tensorop.tensorop import TensorOp
from fe_core.schedule.scheduler import Scheduler
from fe_core.export import fe_export
from fe_core.install_hint import install_command

if TYPE_CHECKING:  # imported lazily by __getattr__ below
    from fe_tf.network import TFNetwork
    from fe_torch.network import TorchNetwork

__all__ = ["Network", "build", "BaseNetwork", "TorchNetwork", "TFNetwork", "default_backend_name"]

# The built-in backends in order of preference, with the module whose presence in sys.modules means "in use".
_PREFERRED_BACKENDS = (("torch", "torch"), ("tf", "tensorflow"))
# Framework Networks reachable as `fe.network.TorchNetwork` / `fe.network.TFNetwork`, imported only when touched.
_BACKEND_NETWORKS = {"TorchNetwork": "fe_torch.network", "TFNetwork": "fe_tf.network"}

OpList = Union[None, TensorOp, Scheduler, Iterable[Union[TensorOp, Scheduler]]]
PopList = Union[None, NumpyOp, Scheduler, Iterable[Union[NumpyOp, Scheduler]]]


@fe_export("fe.network.default_backend_name")
def default_backend_name() -> str:
    """The backend a Network without models runs on.

    A backend whose framework is already imported wins (so a TensorFlow script without models never imports torch);
    otherwise the first installed of 'torch' and 'tf', then any other installed backend.

    Raises:
        BackendNotInstalledError: If no backend is installed; the message says how to install one.
    """
    installed = available_backends()
    for name, module in _PREFERRED_BACKENDS:
        if module in sys.modules and name in installed:
            return name
    for name, _ in _PREFERRED_BACKENDS:
        if name in installed:
            return name
    if installed:
        return installed[0]
    raise BackendNotInstalledError(
        "fe.Network needs a backend, and neither fe-torch nor fe-tf is installed. Install one with: "
        f"{install_command('fe-torch')} for PyTorch, or {install_command('fe-tf')} for TensorFlow")


@fe_export("fe.network.Network", "fe.Network")
def Network(ops: OpList, pops: PopList = None, slicers: Any = None) -> BaseNetwork:  # pylint: disable=invalid-name
    """Create the Network for the framework of the models inside `ops`.

    Args:
        ops: The TensorOps (or Schedulers of TensorOps) to run on each batch: typically `ModelOp`, a loss and
            `UpdateOp`. The models are found in them.
        pops: Postprocessing NumpyOps, run on the CPU after the TensorOps (and after un-slicing).
        slicers: Slicers that cut each batch into minibatches before the ops and fuse the results afterwards.

    Returns:
        A `TorchNetwork` or `TFNetwork` (whichever backend owns the models). Without models, the Network of the
        backend already in use, else of the first installed of torch and tf.

    Raises:
        ValueError: If models of different frameworks are mixed, two models share a name (case-insensitively), or a
            model belongs to no installed backend.
        BackendNotInstalledError: If there are no models and no backend is installed.

    Example:
        >>> # model = fe.build(model_fn=LeNet, optimizer_fn="adam")
        >>> # network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
        >>> #                           CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
        >>> #                           UpdateOp(model=model, loss_name="ce")])  # doctest: +SKIP
    """
    has_models = bool(collect_models(filter_nones(to_list(ops))))
    return make_network(ops, pops, slicers, default_backend=None if has_models else default_backend_name())


def __getattr__(name: str) -> Any:
    """`TorchNetwork` / `TFNetwork`, imported from their backend package only when asked for."""
    if name in _BACKEND_NETWORKS:
        return getattr(importlib.import_module(_BACKEND_NETWORKS[name]), name)
    raise AttributeError(f"module 'fe.network' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_BACKEND_NETWORKS))
