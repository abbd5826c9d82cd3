"""The Scheduler family, where FastEstimator 1.x defines it (`fastestimator.schedule.schedule`)."""
from fe_core.schedule.scheduler import (EpochScheduler, RepeatScheduler, Scheduler, get_current_items,
                                        get_signature_epochs)

__all__ = ["EpochScheduler", "RepeatScheduler", "Scheduler", "get_current_items", "get_signature_epochs"]
