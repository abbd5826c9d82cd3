"""Meta TensorOps: `Sometimes`, `OneOf`, `Repeat`, `Fuse`."""
from fe_core.op.tensorop.meta.repeat import Fuse, Repeat
from fe_core.op.tensorop.meta.sometimes import OneOf, Sometimes

__all__ = ["Sometimes", "OneOf", "Repeat", "Fuse"]
