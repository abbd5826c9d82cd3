"""`TensorBoard`."""
from fe_core.trace.io.tensorboard import TensorBoard

__all__ = ["TensorBoard"]
