"""Learning-rate shapes, at FastEstimator 1.x's module path (`fastestimator.schedule.lr_shedule`, spelled so there)."""
from fe_core.schedule.lr_shape import cosine_decay

__all__ = ["cosine_decay"]
