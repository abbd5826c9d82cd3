"""`Estimator` (FastEstimator's `fastestimator.estimator`) and `enable_deterministic`."""
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator

__all__ = ["Estimator", "enable_deterministic"]
