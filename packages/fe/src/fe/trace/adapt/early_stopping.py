"""`EarlyStopping`."""
from fe_core.trace.adapt.early_stopping import EarlyStopping

__all__ = ["EarlyStopping"]
