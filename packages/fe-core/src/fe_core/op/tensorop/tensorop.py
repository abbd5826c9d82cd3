"""`TensorOp`: ops that run in the Network on framework tensors."""
from __future__ import annotations

from typing import Any, Dict, Optional, Set

from fe_core.op.op import Op
from fe_core.export import fe_export

__all__ = ["TensorOp", "StatelessOp", "framework_of_data"]

_FRAMEWORK_NAMES = {"fe_torch": "torch", "fe_tf": "tf"}


def framework_of_data(data: Any) -> Optional[str]:
    """The backend name ('torch', 'tf') of the first framework tensor in `data` (a value or a list/tuple/dict of
    values), or None when it holds none. Looks at types only: no framework is imported.

    Example:
        >>> framework_of_data([1.0, "text"]) is None
        True
    """
    from fe_core.backend.dispatch import framework_of  # pylint: disable=import-outside-toplevel
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif value is not None:
            package = framework_of(type(value))
            if package is not None:
                return _FRAMEWORK_NAMES.get(package, package)
    return None


@fe_export("fe.op.tensorop.tensorop.TensorOp", "fe.op.tensorop.TensorOp", "fe.op.TensorOp")
class TensorOp(Op):
    """An op on framework tensors, run by the Network on the device.

    Generic ops written once for every framework set `kernel_name`; `build` then fetches the backend's kernel, and
    `forward` calls it. A user-written TensorOp can instead override `forward` with framework code.

    Called outside a Network (directly on tensors), an op that was not built builds itself on first use for the
    framework of its input tensors (torch or TensorFlow); after that a call costs what it costs inside a Network.

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
            prepare = getattr(self._kernel, "fe_prepare", None)  # a kernel's one-time setup (eager, before tracing)
            if prepare is not None:
                prepare(self)
        self.framework = framework
        self.device = device

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        kernel = getattr(self, "_kernel", None)
        if kernel is None:
            if self.kernel_name is None:
                return data
            self.ensure_built(data)
            kernel = self._kernel
        return kernel(self, data, state)

    def ensure_built(self, data: Any) -> None:
        """Build the op for the framework of `data`'s tensors unless it is built already (lets ops run outside a
        Network).

        Raises:
            TypeError: If the op is not built and `data` holds no torch or TensorFlow tensor.
        """
        if getattr(self, "framework", None) is not None:
            return
        framework = framework_of_data(data)
        if framework is None:
            raise TypeError(f"{type(self).__name__} runs on torch or TensorFlow tensors, got "
                            f"{type(data).__name__} (inputs {self.inputs}); inside a Network it is built for the "
                            "Network's framework")
        self.build(framework, None)

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


class StatelessOp:
    """Mixin for TensorOps whose attributes are all configuration or per-process caches (tensors, distributions,
    parameter lists a kernel keeps on the op): a checkpoint saves nothing for them (their randomness comes from the
    framework's generators, which checkpoints save)."""

    def get_state(self) -> Dict[str, Any]:
        """Nothing to save."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Nothing to restore."""
