"""`TensorOp`: ops that run in the Network on framework tensors."""
from __future__ import annotations

from typing import Any, Dict, Optional, Set

from fe_core.op.op import Op
from fe_core.export import fe_export

__all__ = ["TensorOp"]


@fe_export("fe.op.tensorop.tensorop.TensorOp", "fe.op.tensorop.TensorOp", "fe.op.TensorOp")
class TensorOp(Op):
    """An op on framework tensors, run by the Network on the device.

    Generic ops written once for every framework set `kernel_name`; `build` then fetches the backend's kernel, and
    `forward` calls it. A user-written TensorOp can instead override `forward` with framework code.

    Args:
        inputs: Key(s) to read.
        outputs: Key(s) to write.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    kernel_name: Optional[str] = None

    def build(self, framework: str, device: Any = None) -> None:
        """Prepare the op for `framework` on `device` (called by the Network once, before any step).

        Args:
            framework: The backend name ('torch', 'tf', ...).
            device: The backend's device (None when the framework places tensors itself).
        """
        if self.kernel_name is not None:
            from fe_core.framework.registry import get_backend  # local: keeps op import light
            self._kernel = get_backend(framework).kernel(self.kernel_name)
        self.framework = framework
        self.device = device

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        kernel = getattr(self, "_kernel", None)
        if kernel is None:
            if self.kernel_name is None:
                return data
            raise RuntimeError(f"{type(self).__name__} was not built: the Network calls build(framework, device) "
                               "before running it")
        return kernel(self, data, state)

    def get_fe_models(self) -> Set[Any]:
        """The models this op uses (ModelOp and UpdateOp return theirs)."""
        return set()

    def get_fe_loss_keys(self) -> Set[str]:
        """The keys this op treats as losses (UpdateOp returns its loss key)."""
        return set()

    def fe_retain_graph(self, retain: Optional[bool] = None) -> Optional[bool]:
        """Whether this op computes gradients and must keep the graph for a later gradient op.

        Ops that compute gradients return a bool (and set it when `retain` is given); other ops return None.
        """
        return None
