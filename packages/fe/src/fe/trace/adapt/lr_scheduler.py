"""`LRScheduler`."""
from fe_core.trace.adapt.lr_scheduler import LRScheduler

__all__ = ["LRScheduler"]
