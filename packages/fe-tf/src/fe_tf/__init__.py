"""fe-tf: the TensorFlow backend of fe, on Keras 3 or, with `TF_USE_LEGACY_KERAS=1` and tf-keras installed
(`fe-tf[keras2]`), on Keras 2: whichever Keras `tf.keras` resolves to (`fe_tf._keras`).

Importing `fe_tf` imports TensorFlow. fe finds this backend through the registry ('tf' -> `fe_tf.framework:TFBackend`),
so user code rarely imports it directly, except for the architectures.

Example:
    >>> # from fe_tf import LeNet, TFNetwork  # doctest: +SKIP
"""
import os as _os
import sys as _sys

# TensorFlow's C++ start-up lines (CUDA probing, 'failed call to cuInit' on machines without a GPU, cpu_feature_guard)
# are not the user's business in every run: when fe is the first to import TensorFlow and the user has not chosen a
# level, fe hides them (TF_CPP_MIN_LOG_LEVEL=0 shows everything again; errors still raise Python exceptions).
if "tensorflow" not in _sys.modules:
    _os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from fe_tf.__about__ import __version__  # noqa: E402  (after the log level, before TensorFlow's first import)
from fe_tf.architecture import LeNet, ResNet9
from fe_tf.framework import TFBackend
from fe_tf.distribute import MIRRORED_STRATEGY_REDUCER
from fe_tf.network import TFNetwork

__all__ = ["__version__", "TFBackend", "TFNetwork", "LeNet", "ResNet9", "MIRRORED_STRATEGY_REDUCER"]
