"""Epoch-dependent values (`EpochScheduler`, `RepeatScheduler`), learning-rate shapes (`cosine_decay`) and the ARC
learning-rate controller (`fe_core.schedule.arc`, imported on use)."""
from fe_core.schedule.lr_shape import cosine_decay
from fe_core.schedule.scheduler import (EpochScheduler, RepeatScheduler, Scheduler, get_current_items,
                                        get_signature_epochs)

__all__ = ["Scheduler", "EpochScheduler", "RepeatScheduler", "get_current_items", "get_signature_epochs", "cosine_decay",
           "ARC"]


def __getattr__(name: str):  # ARC on first use: it is the only part of this package that needs more than numpy
    if name == "ARC":
        from fe_core.schedule.arc import ARC  # pylint: disable=import-outside-toplevel
        return ARC
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
