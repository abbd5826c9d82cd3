"""`ModelSaver`."""
from fe_core.trace.io.model_saver import ModelSaver

__all__ = ["ModelSaver"]
