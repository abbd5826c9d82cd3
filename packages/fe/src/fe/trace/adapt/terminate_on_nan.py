"""`TerminateOnNaN`."""
from fe_core.trace.adapt.terminate_on_nan import TerminateOnNaN

__all__ = ["TerminateOnNaN"]
