"""`ReduceLROnPlateau`."""
from fe_core.trace.adapt.reduce_lr_on_plateau import ReduceLROnPlateau

__all__ = ["ReduceLROnPlateau"]
