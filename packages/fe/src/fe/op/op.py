"""`Op`, the base of every op, and the helpers that read and write an op's keys."""
from fe_core.op.op import Op, get_inputs_by_op, write_outputs_by_op

__all__ = ["Op", "get_inputs_by_op", "write_outputs_by_op"]
