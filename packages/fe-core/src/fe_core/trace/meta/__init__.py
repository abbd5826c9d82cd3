"""Meta traces: `per_ds`, which gives a trace per-dataset results."""
from fe_core.trace.meta.per_ds import per_ds

__all__ = ["per_ds"]
