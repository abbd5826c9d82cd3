"""Ops (FastEstimator's `fastestimator.op`): `numpyop` for the Pipeline, `tensorop` for the Network."""
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import Op
from fe_core.op.tensorop.tensorop import TensorOp
from fe.op import numpyop, op, tensorop

__all__ = ["NumpyOp", "Op", "TensorOp", "numpyop", "op", "tensorop"]
