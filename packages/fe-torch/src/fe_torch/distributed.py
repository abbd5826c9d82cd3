"""Data-parallel training on torch.distributed: process group set-up, the communicator, DistributedDataParallel.

An unchanged fe script started by `torchrun` (or any launcher that sets `RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
`MASTER_ADDR`, `MASTER_PORT`: torch.distributed.launch, Ray Train's TorchTrainer, a Slurm or Kubernetes job that
exports them) trains data-parallel:

- `setup()` (called by `fe.build` and by `TorchNetwork`, so before any model is placed) notices the launcher's
  environment, picks this process's device (`cuda:<LOCAL_RANK>` when CUDA is available, else the CPU), initialises
  the default process group (NCCL on GPUs, gloo on CPUs; a group the script initialised itself is used as it is) and
  installs a `TorchCommunicator` as fe-core's communicator; the group is destroyed when the process exits.
- `wrap_model()` (called by `TorchNetwork`) wraps every trainable model in `DistributedDataParallel`, internally:
  `fe.build` still returns the user's model object, training steps run through the wrapper (whose backward
  all-reduces the gradients, bucketed and overlapped with the backward pass), and evaluation calls the model itself
  (no collective per eval step).

The Pipeline then hands each process its part of every global batch (see `fe_core.distributed.sharding`).

Environment knobs: `FE_DIST_TIMEOUT` (seconds a collective may wait, default 1800), `FE_DIST_EXIT_TIMEOUT` (seconds
the processes wait for each other at a normal exit over gloo, default 60), `FE_DDP_FIND_UNUSED=1` (models
with parameters a step does not use; slower).
"""
from __future__ import annotations

import atexit
import datetime
import os
import socket
import sys
from typing import Any, Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist
from fe_core.distributed.communicator import Communicator, launcher_env, set_communicator
from fe_core.distributed.failure import pid_alive, record_failure
from fe_torch.sharding import is_sharded

__all__ = ["TorchCommunicator", "setup", "teardown", "communicator", "wrap_model", "unwrap_model", "device",
           "average_gradients", "group_backend"]

_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}


class TorchCommunicator(Communicator):
    """fe-core's communicator on the default torch.distributed process group.

    Args:
        world_size: The group's size.
        rank: This process's rank.
        local_rank: This process's index on its machine.
        device: Where collectives' tensors live (the rank's GPU for NCCL, the CPU for gloo).
    """

    name = "torch"

    def __init__(self, world_size: int, rank: int, local_rank: int, device: torch.device) -> None:
        super().__init__(world_size=world_size, rank=rank, local_rank=local_rank)
        self.device = device

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def _all_reduce(self, array: np.ndarray, op: str) -> np.ndarray:
        tensor = self._tensor(array)
        dist.all_reduce(tensor, op=_OPS[op])
        return tensor.cpu().numpy()

    def _all_gather_equal(self, array: np.ndarray) -> np.ndarray:
        tensor = self._tensor(array)
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        dist.all_gather(parts, tensor)
        return np.stack([part.cpu().numpy() for part in parts])

    def barrier(self) -> None:
        if self.device.type == "cuda":
            dist.barrier(device_ids=[self.device.index])
        else:
            dist.barrier()

    # failures: one key per rank in the process group's store (under torchrun its agent holds it, so it outlives the
    # workers), read by rank 0 when its collective breaks (see fe_core.distributed.failure)
    def record_failure(self, text: str) -> None:
        _store().set(f"{_FAILURE_KEY}{self.rank}", text)

    def failure_reports(self) -> Dict[int, str]:
        store = _store(quick=True)
        keys = {rank: f"{_FAILURE_KEY}{rank}" for rank in range(self.world_size)}
        return {rank: store.get(key).decode("utf-8", "replace") for rank, key in keys.items() if store.check([key])}

    def lost_ranks(self) -> List[int]:
        """The ranks on this machine whose process is gone (each rank wrote its host and pid at set-up)."""
        store, host, lost = _store(quick=True), socket.gethostname(), []
        for rank in range(self.world_size):
            key = f"{_PROCESS_KEY}{rank}"
            if rank == self.rank or not store.check([key]):
                continue
            where, _, pid = store.get(key).decode("utf-8", "replace").rpartition(" ")
            if where == host and pid.isdigit() and not pid_alive(int(pid)):
                lost.append(rank)
        return lost

    def is_connection_loss(self, error: BaseException) -> bool:
        seen = set()
        current: Optional[BaseException] = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, getattr(dist, "DistNetworkError", ())):
                return True
            current = current.__cause__ or current.__context__
        return super().is_connection_loss(error)


_FAILURE_KEY = "fe/failed/"
_PROCESS_KEY = "fe/process/"


def _store(quick: bool = False) -> Any:
    """The default process group's store (c10d's; the launcher's TCPStore under torchrun). `quick`: reading it while
    the run is failing, when the store's host may be gone too - wait seconds for it, not the run's timeout."""
    store = dist.distributed_c10d._get_default_store()  # pylint: disable=protected-access
    if quick:
        store.set_timeout(datetime.timedelta(seconds=10))
    return store


def _announce(rank: int) -> None:
    """Write this process's host and pid into the store (so rank 0 can tell a killed peer from a slow one), and
    record an unhandled exception of the script, raised outside a run, before the process exits."""
    try:
        _store().set(f"{_PROCESS_KEY}{rank}", f"{socket.gethostname()} {os.getpid()}")
    except Exception:  # pylint: disable=broad-except  # a store without set: failures are then reported generically
        return
    previous = sys.excepthook

    def excepthook(kind: Any, value: BaseException, traceback: Any) -> None:
        if _communicator is not None and isinstance(value, Exception):
            record_failure(value, _communicator)
        previous(kind, value, traceback)

    sys.excepthook = excepthook


_communicator: Optional[TorchCommunicator] = None
_owns_group = False


def communicator() -> Optional[TorchCommunicator]:
    """The communicator `setup()` installed, or None in a single-process run."""
    return _communicator


def group_backend(use_cuda: bool, cpu_offload: bool = False) -> str:
    """The process group's backend: gloo on CPUs, NCCL on GPUs, and both ("cpu:gloo,cuda:nccl") when a sharded
    model keeps its slices in host memory (FSDP(cpu_offload=True)): gradient clipping and the loss scaler then
    all-reduce CPU tensors, which NCCL cannot."""
    if not use_cuda:
        return "gloo"
    return "cpu:gloo,cuda:nccl" if cpu_offload else "nccl"


def setup(cpu_offload: bool = False) -> Optional[TorchCommunicator]:
    """Join the launcher's process group (once per process) and install fe-core's communicator on it.

    Args:
        cpu_offload: A sharded model will keep its slices in host memory: on GPUs, the group gets gloo for CPU
            tensors beside NCCL (`group_backend`). Asked for after the group exists over NCCL alone, it is refused.

    Returns:
        The communicator, or None when no launcher started this process (or it started one process).

    Raises:
        ValueError: If the launcher's variables are malformed.
    """
    global _communicator, _owns_group  # pylint: disable=global-statement
    if _communicator is not None:
        if cpu_offload and _communicator.device.type == "cuda" and "gloo" not in str(dist.get_backend()).lower():
            from fe_core.config_error import ConfigurationError  # pylint: disable=import-outside-toplevel
            raise ConfigurationError("build(sharding=FSDP(cpu_offload=True)) needs a process group with gloo beside "
                                     "NCCL (\"cpu:gloo,cuda:nccl\"), but the group was already started with NCCL "
                                     "alone: build the offloaded model first, or init_process_group(backend="
                                     "\"cpu:gloo,cuda:nccl\") yourself")
        return _communicator
    env = launcher_env()
    if env is None and not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
        return None
    if not dist.is_available():
        raise RuntimeError("This process was started by a distributed launcher, but this torch build has no "
                           "torch.distributed")
    local_rank = env["local_rank"] if env is not None else int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available()
    if use_cuda:
        local_rank %= torch.cuda.device_count()
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    if not dist.is_initialized():
        timeout = datetime.timedelta(seconds=float(os.environ.get("FE_DIST_TIMEOUT", "1800")))
        dist.init_process_group(backend=group_backend(use_cuda, cpu_offload), init_method="env://",
                                world_size=env["world_size"], rank=env["rank"], timeout=timeout)
        _owns_group = True
        atexit.register(teardown)
    _communicator = TorchCommunicator(dist.get_world_size(), dist.get_rank(), local_rank, device)
    set_communicator(_communicator)
    _announce(_communicator.rank)
    return _communicator


def teardown() -> None:
    """Leave the process group fe joined (a group the script initialised is left to the script)."""
    global _communicator, _owns_group  # pylint: disable=global-statement
    if _communicator is None:
        return
    set_communicator(None)
    _communicator = None
    if _owns_group and dist.is_initialized():
        _last_barrier()
        dist.destroy_process_group()
    _owns_group = False


def _last_barrier() -> None:
    """On a normal exit over gloo, wait (bounded) until every process is done with the group before any closes it.

    A process whose peer has already torn its connections down can abort in gloo's threads at exit ("terminate called
    without an active exception", SIGABRT); waiting for all first is the documented way to end a group. Skipped when
    the script is exiting on an unhandled exception (a peer may be blocked in a collective it will never finish) and
    on NCCL (whose barrier has no timeout of its own).
    """
    if hasattr(sys, "last_value") or str(dist.get_backend()).lower() != "gloo":
        return
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=float(os.environ.get("FE_DIST_EXIT_TIMEOUT", "60"))))
    except Exception:  # pylint: disable=broad-except  # a peer that died first: leave the group regardless
        pass


def device() -> Optional[torch.device]:
    """This process's device in a data-parallel run (None in a single process)."""
    return _communicator.device if _communicator is not None else None


def wrap_model(model: torch.nn.Module) -> Optional[torch.nn.Module]:
    """Wrap a trainable model in DistributedDataParallel (once) and keep the wrapper on the model as `fe_ddp`.

    A model sharded by `build(sharding=...)` is its own wrapper (FSDP2's hooks all-gather in its forward pass and
    reduce-scatter in its backward pass): `fe_ddp` is the model itself, so the training steps take the same path.

    The wrapper is stored outside the module's registry (`object.__setattr__`), so the model's `state_dict`,
    `parameters()` and saved files are unchanged. A model without trainable parameters is not wrapped.

    Returns:
        The wrapper, or None when not distributed or nothing to train.
    """
    if _communicator is None:
        return None
    existing = model.__dict__.get("fe_ddp")
    if existing is not None:
        return existing
    if not any(parameter.requires_grad for parameter in model.parameters()):
        return None
    if is_sharded(model):  # FSDP2: the sharded model does its own collectives
        object.__setattr__(model, "fe_ddp", model)
        return model
    device_ids: Optional[List[int]] = [_communicator.device.index] if _communicator.device.type == "cuda" else None
    wrapper = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=device_ids, find_unused_parameters=os.environ.get("FE_DDP_FIND_UNUSED") == "1")
    object.__setattr__(model, "fe_ddp", wrapper)
    return wrapper


def average_gradients(gradients: List[Optional[torch.Tensor]]) -> List[Optional[torch.Tensor]]:
    """The mean over the processes of gradients computed outside DDP's backward (`UpdateOp(gradients=...)`), which
    DDP's hooks never see: one all-reduce of all of them, flattened (every rank holds the same layout)."""
    if _communicator is None:
        return gradients
    present = [index for index, gradient in enumerate(gradients) if gradient is not None]
    if not present:
        return gradients
    flat = torch.cat([gradients[index].reshape(-1) for index in present])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat /= _communicator.world_size
    averaged = list(gradients)
    offset = 0
    for index in present:
        size = gradients[index].numel()
        averaged[index] = flat[offset:offset + size].view_as(gradients[index])
        offset += size
    return averaged


def unwrap_model(model: Any) -> Any:
    """The user's model of a DDP wrapper (anything else is returned as it is)."""
    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model
