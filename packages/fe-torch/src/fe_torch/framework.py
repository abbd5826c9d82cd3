"""`TorchBackend`: fe-core's `Backend` for PyTorch (registered as 'torch': `fe_torch.framework:TorchBackend`)."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch
from fe_core.framework.base import Backend, StateReducer
from fe_core.schedule.scheduler import Scheduler

from fe_torch import checkpoint, devices, distributed, kernels, optimizers, sharded_build
from fe_torch import sharding as fsdp
from fe_torch.network import TorchNetwork

__all__ = ["TorchBackend"]


def _reduce_tensor(tensor: torch.Tensor) -> Dict[str, Any]:
    return {"dtype": str(tensor.dtype).replace("torch.", ""), "value": devices.to_numpy(tensor)}


# The dtypes a checkpointed tensor may name: an explicit table, so a name read from a checkpoint is never looked up
# on the torch module (getattr(torch, "_dynamo") would import and run code).
_TENSOR_DTYPES: Dict[str, torch.dtype] = {
    str(dtype).replace("torch.", ""): dtype
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
                  torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)
}


def _restore_tensor(data: Dict[str, Any]) -> torch.Tensor:
    """Rebuild a tensor reduced by `_reduce_tensor` (the reducer's restore, run on checkpoint data).

    Raises:
        ValueError: If the data is malformed or names a dtype outside the table.
    """
    if not isinstance(data, dict) or not isinstance(data.get("dtype"), str) or "value" not in data:
        raise ValueError(f"A checkpointed torch tensor should be {{'dtype': str, 'value': array}}, found {data!r:.80}")
    dtype = _TENSOR_DTYPES.get(data["dtype"])
    if dtype is None:
        raise ValueError(f"A checkpointed torch tensor names the dtype {data['dtype']!r:.40}, which is not one of "
                         f"{sorted(_TENSOR_DTYPES)}")
    return torch.from_numpy(np.array(data["value"])).to(dtype)


def _assign_tensor(current: torch.Tensor, data: Any) -> None:
    """Restore a checkpointed tensor into `current` in place (it may be shared by a trace and an op)."""
    restored = data if isinstance(data, torch.Tensor) else _restore_tensor(data)
    if restored.shape != current.shape:
        raise ValueError(f"A checkpointed torch tensor of shape {tuple(restored.shape)} cannot be restored into one of "
                         f"shape {tuple(current.shape)}")
    with torch.no_grad():
        current.copy_(restored.to(device=current.device, dtype=current.dtype))


class TorchBackend(Backend):
    """The PyTorch backend: torch models (`nn.Module`), `TorchNetwork`, the op kernels, `.pt` checkpoints.

    Example:
        >>> from fe_core.framework import get_backend
        >>> get_backend("torch").name
        'torch'
    """

    name = "torch"
    framework_module = "torch"
    model_extension = "pt"
    supports_sharding = True  # `build(sharding=...)`: FSDP2 (fe_torch.sharding)

    # ----- models -----
    def owns_model(self, obj: Any) -> bool:
        torch_module = sys.modules.get("torch")
        return torch_module is not None and isinstance(obj, torch_module.nn.Module)

    def make_network(self, ops: Sequence[Any], pops: Optional[Sequence[Any]], slicers: Optional[Sequence[Any]]
                     ) -> TorchNetwork:
        return TorchNetwork(ops, pops, slicers)

    def compile_model(self, model: Any, optimizer_fn: Any, weights_path: Optional[str], model_name: str,
                      mixed_precision: bool, sharding: Any = None) -> torch.nn.Module:
        """Move `model` to the device (once, here), shard it if asked (FSDP2, before its optimizer is made on the
        slices), attach its optimizer(s), name and precision, load weights.

        Raises:
            TypeError: If `model` is not an `nn.Module`, or `optimizer_fn` is invalid.
            ValueError: For an unknown optimizer name or weights that do not fit.
            FileNotFoundError: If `weights_path` does not exist.
        """
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"The torch backend can only compile torch.nn.Module models; model {model_name!r} is a "
                            f"{type(model).__name__}")
        spec = None if sharding is None else fsdp.resolve_sharding(sharding, model_name)
        distributed.setup(cpu_offload=bool(spec is not None and spec.cpu_offload))  # join the process group first
        device = self.default_device()
        if spec is None:
            model.to(device)
        else:
            self._shard(model, spec, model_name, device)
        optimizer = optimizers.build_scheduled_optimizer(optimizer_fn, model, model_name, mixed_precision, device)
        if sharding is not None:
            fsdp.check_optimizers(model, optimizers.scheduled_optimizers(optimizer), model_name)
        model.model_name = model_name
        model.optimizer = optimizer
        model.current_optimizer = optimizer.get_current_value(1) if isinstance(optimizer, Scheduler) else optimizer
        model.mixed_precision = bool(mixed_precision)
        model.fe_compiled = True
        if weights_path:
            checkpoint.load_weights(model, weights_path)
        return model

    def sharded_build_scope(self, model_fn: Any) -> Any:
        """Where `build(..., sharding=...)` runs `model_fn` in a distributed run: the meta device (no memory; the
        slices are materialised after sharding, see `fe_torch.sharded_build`). Elsewhere nothing changes (one
        process refuses sharding in `compile_model`)."""
        import contextlib  # pylint: disable=import-outside-toplevel
        from fe_core.distributed.communicator import launcher_env  # pylint: disable=import-outside-toplevel
        env = launcher_env()
        if env is None or env["world_size"] < 2 or fsdp._torch_version() < fsdp.MIN_TORCH:  # pylint: disable=W0212
            return contextlib.nullcontext()
        return sharded_build.scope(model_fn)

    @staticmethod
    def _shard(model: torch.nn.Module, spec: Any, model_name: str, device: torch.device) -> None:
        """Shard `model` over the processes: built on the meta device (`sharded_build_scope`), it is sharded, then
        each process materialises its slices only; a model built whole (by the user, or with unsharded models in the
        same `build`) is moved to the device and sharded from rank 0's weights, as DDP starts from rank 0's."""
        communicator = distributed.communicator()
        world = communicator.world_size if communicator is not None else None
        fsdp.check_world(model_name, world)
        if spec.cpu_offload and device.type == "cpu":
            raise fsdp.offload_on_cpu_error(model_name)
        if sharded_build.is_meta(model):
            prepared = sharded_build.prepare(model, model_name)
            fsdp.shard_model(model, spec, model_name, world, offload_checked=True)
            sharded_build.materialize(model, torch.device("cpu") if spec.cpu_offload else device, model_name,
                                      prepared)
            fsdp.record_sharded_parameters(model)
        else:
            model.to(device)
            sharded_build.broadcast_module_state(model, model if communicator.rank == 0 else None)
            fsdp.shard_model(model, spec, model_name, world, offload_checked=True)
        fsdp.sync_buffers(model)

    # ----- kernels -----
    kernel_model = staticmethod(kernels.model_kernel)
    kernel_update = staticmethod(kernels.update_kernel)
    kernel_cross_entropy = staticmethod(kernels.cross_entropy_kernel)
    kernel_mean_squared_error = staticmethod(kernels.mean_squared_error_kernel)
    kernel_l1_loss = staticmethod(kernels.l1_loss_kernel)
    kernel_argmax = staticmethod(kernels.argmax_kernel)

    # ----- tensors and devices -----
    def to_tensor(self, data: Any, device: Any = None) -> Any:
        return devices.to_device(data, torch.device(device) if device is not None else self.default_device())

    def to_numpy(self, data: Any) -> Any:
        return devices.to_numpy(data)

    def default_device(self) -> torch.device:
        return devices.default_device()

    def num_devices(self) -> int:
        return devices.num_devices()

    def public_loader_class(self) -> Optional[type]:
        from fe_torch.public_loader import TorchPublicLoader  # pylint: disable=import-outside-toplevel
        return TorchPublicLoader

    def is_native_dataset(self, dataset: Any) -> bool:
        data_module = sys.modules.get("torch.utils.data")
        return data_module is not None and isinstance(dataset, data_module.DataLoader)

    def unsharded_native_dataset(self, dataset: Any) -> Optional[str]:
        from torch.utils.data import DistributedSampler, IterableDataset  # pylint: disable=import-outside-toplevel
        if isinstance(dataset.dataset, IterableDataset):
            return None  # an iterable dataset splits its stream itself (get_worker_info / the rank), or not at all
        batch_sampler = getattr(dataset, "batch_sampler", None)
        samplers = [getattr(dataset, "sampler", None), getattr(batch_sampler, "sampler", None)]
        if any(isinstance(sampler, DistributedSampler) for sampler in samplers):
            return None
        return (f"its sampler is a {type(dataset.sampler).__name__}, not a torch.utils.data.DistributedSampler: "
                f"every process would train on every sample. Give the DataLoader "
                f"sampler=DistributedSampler(dataset) (and call its set_epoch each epoch), or give the Pipeline the "
                f"dataset itself, which fe splits between processes")

    # ----- state -----
    def save_model(self, model: Any, save_dir: str, save_optimizer: bool) -> List[str]:
        return checkpoint.save_checkpoint_files(model, save_dir, save_optimizer)

    def load_model(self, model: Any, load_dir: str, load_optimizer: bool) -> None:
        checkpoint.load_checkpoint_files(model, load_dir, load_optimizer)

    def verified_when_read(self, name: str) -> bool:
        """Whether a checkpoint file is verified by the processes that read it (`check_model`), not by every process
        before the checkpoint is decoded: each process's slices of a sharded model."""
        return checkpoint.verified_when_read(name)

    def check_model(self, model: Any, checkpoint_data: Any, record: Any) -> None:
        """Before a checkpoint is restored, without changing the model: its files fit it, and the files this process
        will read that were left to it are undamaged (a collective for a sharded model). So a restore needs no copy
        of the models to put back."""
        checkpoint.check_checkpoint_files(model, checkpoint_data.directory, record.optimizer,
                                          checkpoint_data.files, checkpoint_data.unverified)

    def stage_checkpoint(self, models: Sequence[Any], save_dir: str) -> None:
        """Before a checkpoint is written (every process, at the same point): each process writes its slices of the
        sharded models (see `fe_torch.sharded_checkpoint`). Their buffers are saved as rank 0 holds them (the
        distributed checkpoint writes one process's copy of a replicated tensor, not necessarily rank 0's), the values
        every process continues from after a resume, as the next training step's broadcast does in the run that saved
        it; each process keeps its own buffers afterwards."""
        with fsdp.rank0_buffers([model for model in models if fsdp.is_sharded(model)]):
            checkpoint.stage_checkpoint(models, save_dir)

    def reshards(self, models: Sequence[Any], checkpoint_data: Any) -> bool:
        """Whether a checkpoint written by a different number of processes can still resume these models: yes when a
        model is sharded now or was sharded then (torch's distributed checkpoint reshards them exactly)."""
        return checkpoint.reshards(models, [name for record in checkpoint_data.models for name in record.files])

    def is_sharded(self, model: Any) -> bool:
        """Whether `model` is sharded across the processes (`build(sharding=...)`): no process holds it whole."""
        return fsdp.is_sharded(model)

    def join_save_weights(self, model: Any) -> None:
        """On the processes that do not write a full-weights file: take part in gathering a sharded model's weights
        (a collective) while rank 0 writes them."""
        checkpoint.join_save_weights(model)

    def save_weights(self, model: Any, path: str) -> str:
        return checkpoint.save_weights(model, path)

    def load_weights(self, model: Any, path: str) -> None:
        checkpoint.load_weights(model, path)

    def get_lr(self, model: Any) -> float:
        return optimizers.get_lr(model)

    def set_lr(self, model: Any, lr: float) -> None:
        optimizers.set_lr(model, lr)

    def seed(self, seed: int) -> None:
        """Seed torch's CPU and CUDA generators and switch to deterministic algorithms (warning where none exists)."""
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed by deterministic cuBLAS
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
        # Deterministic mode also makes torch write a NaN/max value into every tensor it allocates uninitialized
        # (`torch.empty`, most kernels' outputs and gradient buffers): a debugging aid that costs a full extra write
        # of every activation and gradient, which on a large model's step (a ViT encoder at batch 1) is a large share
        # of the step. Results of code that never reads uninitialized memory do not depend on it, so fe keeps the
        # deterministic algorithms and leaves memory filling off (FastEstimator never switched it on).
        torch.utils.deterministic.fill_uninitialized_memory = False
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    def get_rng_state(self) -> Dict[str, Any]:
        """`{"cpu": uint8 array, "cuda": [uint8 array per device]}` (plain numpy data)."""
        cuda = [state.numpy().copy() for state in torch.cuda.get_rng_state_all()] if torch.cuda.is_available() else []
        return {"cpu": torch.get_rng_state().numpy().copy(), "cuda": cuda}

    def set_rng_state(self, state: Any) -> None:
        """Restore `get_rng_state`'s result (CUDA states only where this machine has as many GPUs)."""
        torch.set_rng_state(torch.from_numpy(np.array(state["cpu"], dtype=np.uint8)))
        cuda = state.get("cuda") or []
        if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all([torch.from_numpy(np.array(s, dtype=np.uint8)) for s in cuda])

    def state_reducers(self) -> List[StateReducer]:
        """Torch tensors in trace/op state are stored as numpy arrays with their dtype."""
        return [StateReducer("torch.Tensor", lambda obj: isinstance(obj, torch.Tensor), _reduce_tensor,
                             _restore_tensor, _assign_tensor)]


from fe_torch.tensorop import register_kernels  # noqa: E402  (kernels of the TensorOps beyond fe_torch.kernels)
register_kernels(TorchBackend)
