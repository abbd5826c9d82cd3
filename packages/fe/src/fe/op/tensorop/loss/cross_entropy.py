"""`CrossEntropy`: binary, categorical or sparse cross-entropy, picked from the shapes."""
from fe_core.op.tensorop.loss import CrossEntropy

__all__ = ["CrossEntropy"]
