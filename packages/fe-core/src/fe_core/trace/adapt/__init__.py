"""Traces that adapt training as it runs: `EarlyStopping`, `LRScheduler`, `ReduceLROnPlateau`, `TerminateOnNaN`, and
`PBMCalibrator` (fits a probability calibrator)."""
from fe_core.trace.adapt.early_stopping import EarlyStopping
from fe_core.trace.adapt.lr_scheduler import LRScheduler
from fe_core.trace.adapt.pbm_calibrator import PBMCalibrator
from fe_core.trace.adapt.reduce_lr_on_plateau import ReduceLROnPlateau
from fe_core.trace.adapt.terminate_on_nan import TerminateOnNaN

__all__ = ["EarlyStopping", "LRScheduler", "ReduceLROnPlateau", "TerminateOnNaN", "PBMCalibrator"]
