"""Meta NumpyOps: ops that run other ops (`Fuse`, `OneOf`, `Repeat`, `Sometimes`).

The state of the ops they hold is saved and restored in checkpoints with them (see `MetaOpStateMixin`).
"""
from fe_core.op.numpyop.meta.fuse import Fuse
from fe_core.op.numpyop.meta.nested_state import MetaOpStateMixin
from fe_core.op.numpyop.meta.one_of import OneOf
from fe_core.op.numpyop.meta.repeat import Repeat
from fe_core.op.numpyop.meta.sometimes import Sometimes

__all__ = ["Fuse", "OneOf", "Repeat", "Sometimes", "MetaOpStateMixin"]
