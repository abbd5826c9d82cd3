"""`Trace`, `PerDSTrace` and the traces the Estimator adds itself, where FastEstimator 1.x defines them."""
from fe_core.trace.essential import EvalEssential, TestEssential, TrainEssential
from fe_core.trace.logger import Logger
from fe_core.trace.trace import PerDSTrace, Trace

__all__ = ["EvalEssential", "Logger", "PerDSTrace", "TestEssential", "Trace", "TrainEssential"]
