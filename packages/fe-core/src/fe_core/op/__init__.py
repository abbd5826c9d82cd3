"""Ops: `NumpyOp`s run in the Pipeline, `TensorOp`s run in the Network."""
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.op import Op, get_inputs_by_op, write_outputs_by_op
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["Op", "NumpyOp", "TensorOp", "get_inputs_by_op", "write_outputs_by_op"]
