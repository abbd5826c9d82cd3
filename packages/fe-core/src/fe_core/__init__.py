"""fe-core: the framework-free heart of fe.

System, Summary and Data; the Trace family and trace sorting; Schedulers; Op, NumpyOp, TensorOp and the generic
ops; Slicers; the Pipeline and datasets; BaseNetwork, `make_network` and `build`; the Estimator; the backend registry
and the checkpoint format. Importing it never imports TensorFlow or PyTorch.
"""
from fe_core.__about__ import __version__
from fe_core.framework import Backend, get_backend, register_backend
from fe_core.build import build
from fe_core.containers import filter_nones, to_list, to_set
from fe_core.data import Data, DSData
from fe_core.dataset import NumpyDataset
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.modes import check_ds_id, check_io_names, parse_modes
from fe_core.network import BaseNetwork, make_network
from fe_core.op import NumpyOp, Op, TensorOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import (EpochScheduler, RepeatScheduler, Scheduler, cosine_decay, get_current_items,
                              get_signature_epochs)
from fe_core.summary import Summary, System, ValWithError
from fe_core.trace import Logger, PerDSTrace, Trace, sort_traces

__all__ = [
    "__version__", "Backend", "get_backend", "register_backend", "build", "to_list", "to_set", "filter_nones", "Data",
    "DSData", "NumpyDataset", "enable_deterministic", "Estimator", "parse_modes", "check_ds_id", "check_io_names",
    "BaseNetwork", "make_network", "Op", "NumpyOp", "TensorOp", "Pipeline", "Scheduler", "EpochScheduler",
    "RepeatScheduler", "get_current_items", "get_signature_epochs", "cosine_decay", "Summary", "System", "ValWithError",
    "Trace", "PerDSTrace", "Logger", "sort_traces"
]
