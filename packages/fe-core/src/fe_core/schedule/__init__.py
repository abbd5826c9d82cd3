"""Epoch-dependent values (`EpochScheduler`, `RepeatScheduler`) and learning-rate shapes."""
from fe_core.schedule.lr_shape import cosine_decay
from fe_core.schedule.scheduler import (EpochScheduler, RepeatScheduler, Scheduler, get_current_items,
                                        get_signature_epochs)

__all__ = ["Scheduler", "EpochScheduler", "RepeatScheduler", "get_current_items", "get_signature_epochs", "cosine_decay"]
