"""`OneOf`: run one op chosen at random."""
from fe_core.op.numpyop.meta.one_of import OneOf

__all__ = ["OneOf"]
