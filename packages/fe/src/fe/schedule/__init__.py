"""Schedules (FastEstimator's `fastestimator.schedule`): values that change with the epoch, and learning-rate shapes."""
from fe_core.schedule.lr_shape import cosine_decay
from fe_core.schedule.scheduler import (EpochScheduler, RepeatScheduler, Scheduler, get_current_items,
                                        get_signature_epochs)
from fe.schedule import lr_shedule, schedule

__all__ = ["EpochScheduler", "RepeatScheduler", "Scheduler", "cosine_decay", "get_current_items",
           "get_signature_epochs", "lr_shedule", "schedule"]
