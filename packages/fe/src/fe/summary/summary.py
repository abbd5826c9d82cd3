"""`Summary` and `ValWithError`."""
from fe_core.summary.summary import Summary, ValWithError

__all__ = ["Summary", "ValWithError"]
