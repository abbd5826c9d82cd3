"""`BestModelSaver`."""
from fe_core.trace.io.best_model_saver import BestModelSaver

__all__ = ["BestModelSaver"]
