"""`Pipeline` (FastEstimator's `fastestimator.pipeline`)."""
from fe_core.pipeline import Pipeline

__all__ = ["Pipeline"]
