"""Traces that adapt training as it runs (FastEstimator's `fastestimator.trace.adapt`)."""
from fe_core.trace.adapt.early_stopping import EarlyStopping
from fe_core.trace.adapt.lr_scheduler import LRScheduler
from fe_core.trace.adapt.reduce_lr_on_plateau import ReduceLROnPlateau
from fe_core.trace.adapt.terminate_on_nan import TerminateOnNaN
from fe.trace.adapt import early_stopping, lr_scheduler, reduce_lr_on_plateau, terminate_on_nan

__all__ = ["EarlyStopping", "LRScheduler", "ReduceLROnPlateau", "TerminateOnNaN", "early_stopping", "lr_scheduler",
           "reduce_lr_on_plateau", "terminate_on_nan"]
