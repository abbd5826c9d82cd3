"""The `Backend` interface: what fe-core asks of a deep-learning framework.

fe-core never imports a framework. Everything framework-specific (classifying models, building networks, compiling
models with optimizers, tensor kernels for the generic ops, saving and loading model state, devices, random state)
goes through a `Backend`. `fe_torch.framework.TorchBackend` and `fe_tf.framework.TFBackend` are the built-in ones; tests
and downstream libraries may register their own with `fe_core.framework.register_backend`.

Kernels: a generic TensorOp (ModelOp, UpdateOp, CrossEntropy, ...) declares a `kernel_name`; in
`TensorOp.build(framework, device)` it asks its backend for `backend.kernel(kernel_name)`, a callable
`kernel(op, data, state) -> outputs` with the same contract as `TensorOp.forward`. A backend provides a kernel by
defining a method `kernel_<name>(self, op, data, state)`.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Dict, List, Optional, Sequence

__all__ = ["Backend", "Kernel", "StateReducer"]

Kernel = Callable[[Any, Any, Dict[str, Any]], Any]


@dataclass(frozen=True)
class StateReducer:
    """How a checkpoint stores objects of a backend-specific type that has no plain-data form.

    Args:
        name: A stable tag written into the checkpoint (for example 'tf.MirroredStrategy').
        matches: Whether an object is of this kind.
        reduce: Turns the object into plain data (JSON types and numpy arrays).
        restore: Rebuilds an object from that plain data at load time (code of the installed backend, never code
            from the checkpoint).
        assign: Optionally puts restored data into an existing object in place (`assign(current, data)`), so that an
            object shared by a trace and an op (a torch tensor, a tf.Variable) stays shared after a restore.
    """
    name: str
    matches: Callable[[Any], bool]
    reduce: Callable[[Any], Any]
    restore: Callable[[Any], Any]
    assign: Optional[Callable[[Any, Any], None]] = None


class Backend:
    """The framework-specific half of fe. Subclass it and override what your framework supports.

    Attributes:
        name: The backend's name ('torch', 'tf', ...), the `framework` string ops are built for.
        framework_module: The framework's top-level module name, used to avoid importing it needlessly.
        model_extension: The file extension of saved weights ('pt', 'weights.h5').
    """

    name: str = ""
    framework_module: Optional[str] = None
    model_extension: str = ""

    # ----- models -----
    def owns_model(self, obj: Any) -> bool:
        """Whether `obj` is a model of this backend. Must not import the framework if it is not loaded."""
        return False

    def make_network(self, ops: Sequence[Any], pops: Optional[Sequence[Any]], slicers: Optional[Sequence[Any]]
                     ) -> Any:
        """Create this backend's Network (a `fe_core.network.BaseNetwork`) for the given ops, postprocessing ops and slicers."""
        raise NotImplementedError(f"The {self.name!r} backend cannot make a Network")

    def compile_model(self, model: Any, optimizer_fn: Any, weights_path: Optional[str], model_name: str,
                      mixed_precision: bool) -> Any:
        """Attach an optimizer (or Scheduler of optimizers), a name and precision settings to `model`."""
        raise NotImplementedError(f"The {self.name!r} backend cannot compile models")

    def build_scope(self, mixed_precision: bool) -> ContextManager[None]:
        """A context `build` enters around `model_fn()` (tf: the mixed-precision policy, a distribution scope)."""
        return contextlib.nullcontext()

    def kernel(self, kernel_name: str) -> Kernel:
        """The kernel implementing a generic op.

        Raises:
            NotImplementedError: If this backend has no such kernel.
        """
        function = getattr(self, f"kernel_{kernel_name}", None)
        if function is None:
            raise NotImplementedError(f"The {self.name!r} backend has no kernel for {kernel_name!r}")
        return function

    # ----- tensors and devices -----
    def to_tensor(self, data: Any, device: Any = None) -> Any:
        """Convert a (nested) batch of numpy arrays to this backend's tensors."""
        return data

    def to_numpy(self, data: Any) -> Any:
        """Convert (nested) tensors to numpy arrays."""
        return data

    def default_device(self) -> Any:
        """The device models and batches live on (None when the framework places them itself)."""
        return None

    def num_devices(self) -> int:
        """How many accelerators this backend trains on (0 on CPU)."""
        return 0

    def is_native_dataset(self, dataset: Any) -> bool:
        """Whether `dataset` is a native loader of this framework (DataLoader, tf.data.Dataset)."""
        return False

    def public_loader_class(self) -> Optional[type]:
        """The class of the loader user code gets from `with pipeline(...) as loader:` / `get_loader` when this
        backend's tensors are the public ones: a subclass of `fe_core.pipeline.public_loader.PublicLoader` (that may
        also derive from the framework's own loader class), or None for PublicLoader itself."""
        return None

    def unsharded_native_dataset(self, dataset: Any) -> Optional[str]:
        """For a native loader in a data-parallel run: why every process would read every sample (the loader does
        not split the data between processes), or None when it does or this framework splits it itself."""
        return None

    # ----- state -----
    def save_model(self, model: Any, save_dir: str, save_optimizer: bool) -> List[str]:
        """Write the model's weights (and optimizer state) into `save_dir`; return the file names written.

        Optionally, a name may be a `fe_core.checkpoint.WrittenFile`: a `str` that also carries the size and sha256
        of the bytes the backend meant to write (`fe_core.checkpoint.write_hashed_file` writes a file atomically and
        returns one). A checkpoint's manifest then records that digest, so a file damaged after its write (even
        before the manifest is written) is refused on load. Plain names stay supported: those files are hashed by
        reading them back once written.

        Example:
            >>> # def save_model(self, model, save_dir, save_optimizer):
            >>> #     path = os.path.join(save_dir, f"{model.model_name}.bin")
            >>> #     return [write_hashed_file(path, lambda f: f.write(model.to_bytes())).renamed(
            >>> #         f"{model.model_name}.bin")]
        """
        raise NotImplementedError(f"The {self.name!r} backend cannot save models")

    def load_model(self, model: Any, load_dir: str, load_optimizer: bool) -> None:
        """Read what `save_model` wrote back into `model`."""
        raise NotImplementedError(f"The {self.name!r} backend cannot load models")

    def save_weights(self, model: Any, path: str) -> str:
        """Write only the model's weights to `path` (its extension is `model_extension`); return the path written.

        Used by the model-saving traces (`<model_name>_best_<metric>.<ext>`, `<model_name>_epoch_<n>.<ext>`).
        """
        raise NotImplementedError(f"The {self.name!r} backend cannot save weights")

    def load_weights(self, model: Any, path: str) -> None:
        """Load weights written by `save_weights` into `model`."""
        raise NotImplementedError(f"The {self.name!r} backend cannot load weights")

    def get_update_state(self, op: Any) -> Any:
        """The pending gradient-accumulation state of an UpdateOp (merge_grad) as plain data, for checkpoints."""
        return {}

    def set_update_state(self, op: Any, state: Any) -> None:
        """Restore what `get_update_state` returned."""

    def get_lr(self, model: Any) -> float:
        """The current learning rate of `model`'s optimizer."""
        raise NotImplementedError(f"The {self.name!r} backend cannot read learning rates")

    def set_lr(self, model: Any, lr: float) -> None:
        """Set the learning rate of `model`'s optimizer."""
        raise NotImplementedError(f"The {self.name!r} backend cannot set learning rates")

    def seed(self, seed: int) -> None:
        """Seed the framework's random number generators (and make it deterministic where it can)."""

    def get_rng_state(self) -> Any:
        """The framework's random state as plain data (JSON types and numpy arrays), or None."""
        return None

    def set_rng_state(self, state: Any) -> None:
        """Restore what `get_rng_state` returned."""

    def state_reducers(self) -> List[StateReducer]:
        """Reducers for this backend's objects that may appear in checkpointed state."""
        return []
