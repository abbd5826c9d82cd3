"""A sharded model's whole state: gathered onto rank 0, or sent from rank 0 into every process's slices.

The layer between the format (`model_state`) and the files (`single_file`): ordinary single files hold whole
weights, a sharded model holds slices, and these functions cross between the two with torch's distributed state-dict
API (`torch.distributed.checkpoint.state_dict`). They are collectives: every process of the run calls them. Whole
weights are only ever read by rank 0 (the other processes receive their slices from it), so no other process holds
the whole model in memory.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import torch

from fe_torch.model_state import misfit, restore_accumulation, restore_current_optimizer, restore_hyperparameters, \
    restore_scaler, trainable

__all__ = ["rank", "world_size", "barrier", "agree", "distributed_api", "is_dtensor", "gather_weights",
           "broadcast_weights", "load_whole_optimizers"]


def rank() -> int:
    """This process's rank (0 without a process group)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def world_size() -> int:
    """The number of processes (1 without a process group)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def barrier() -> None:
    """Wait for every process (nothing without a process group)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def agree(failure: Optional[BaseException], what: str) -> None:
    """A collective: every process raises if any process failed (so none is left waiting in a later collective).

    Raises:
        ValueError: Naming the first rank that failed and its error (the failing rank re-raises its own error).
    """
    messages: List[Optional[str]] = [None if failure is None else f"{type(failure).__name__}: {failure}"]
    if world_size() > 1:
        import torch.distributed as dist  # pylint: disable=import-outside-toplevel
        gathered: List[Any] = [None] * world_size()
        dist.all_gather_object(gathered, messages[0])
        messages = gathered
    if failure is not None:
        raise failure
    for index, message in enumerate(messages):
        if message is not None:
            raise ValueError(f"Rank {index} could not {what}: {message}")


def distributed_api(what: str) -> Any:
    """`torch.distributed.checkpoint.state_dict` (present from torch 2.2, complete for FSDP2 from 2.6).

    Raises:
        RuntimeError: One line naming the torch version, on a torch without it.
    """
    try:
        from torch.distributed.checkpoint import state_dict  # pylint: disable=import-outside-toplevel
        return state_dict
    except ImportError as error:
        raise RuntimeError(f"{what} needs torch's distributed checkpoint (torch >= 2.6); this is torch "
                           f"{torch.__version__} ({error})") from None


def is_dtensor(value: Any) -> bool:
    """Whether `value` is a DTensor (a sharded model's parameter or state); False on a torch without DTensor."""
    try:
        from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    return isinstance(value, DTensor)


def gather_weights(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """The whole model's weights on the CPU of rank 0 (an empty dict elsewhere): a collective."""
    api = distributed_api("Gathering a sharded model's weights")
    return api.get_model_state_dict(model, options=api.StateDictOptions(full_state_dict=True, cpu_offload=True))


def broadcast_weights(model: torch.nn.Module, read: Callable[[], Dict[str, torch.Tensor]], where: str) -> None:
    """Whole weights into a sharded model, read by rank 0 alone (`read()` returns the state dict): the others
    receive their slices from it (`set_model_state_dict(broadcast_from_rank0=True)`). Rank 0 checks the weights fit
    first, and a file that cannot be read or does not fit fails on every process alike.

    Raises:
        ValueError: If rank 0 could not read the weights or they do not fit the model.
    """
    api = distributed_api("Loading whole weights into a sharded model")
    state: Dict[str, torch.Tensor] = {}
    failure: Optional[BaseException] = None
    if rank() == 0:
        try:
            state = read()
            problem = misfit(model, state)
            if problem is not None:
                raise ValueError(f"The weights in {where} do not fit torch model {str(model.model_name)!r}: "
                                 f"{problem}")
        except Exception as error:  # pylint: disable=broad-except  (every process raises it, below)
            failure = error
    agree(failure, f"load the weights in {where} into torch model {str(model.model_name)!r}")
    api.set_model_state_dict(model, state, options=api.StateDictOptions(full_state_dict=True,
                                                                        broadcast_from_rank0=True))


def load_whole_optimizers(model: torch.nn.Module, optimizers: List[torch.optim.Optimizer], payload: Dict[str, Any]
                          ) -> None:
    """An ordinary `<name>_opt.pt` payload (whole tensors, parameters numbered) into a sharded model's optimizers:
    each process keeps its slices. An optimizer saved before its first step gets its hyper-parameters back and no
    state (torch's loader would run a step with lr 0 to create some)."""
    api = distributed_api("Loading an optimizer's whole state into a sharded model")
    names = {id(parameter): fqn for fqn, parameter in model.named_parameters()}
    for optimizer, saved in zip(optimizers, payload["optimizers"]):
        if not saved["state"]:
            restore_hyperparameters(optimizer, saved["param_groups"], "the optimizer file")
            continue
        order = [names[id(parameter)] for group in optimizer.param_groups for parameter in group["params"]]
        state = {order[index]: dict(values) for index, values in saved["state"].items()}
        groups = [dict(group, params=[order[index] for index in group["params"]]) for group in saved["param_groups"]]
        api.set_optimizer_state_dict(model, optimizer, {"state": state, "param_groups": groups},
                                     options=api.StateDictOptions(full_state_dict=True))
    for optimizer, scaler in zip(optimizers, payload.get("scalers") or []):
        restore_scaler(optimizer, scaler)
    restore_current_optimizer(model, optimizers, payload)
    params = trainable(model)

    def slices(position: int, saved: Dict[str, Any]) -> Optional[List[Any]]:
        del position
        grads = saved.get("grads")
        if grads is None:
            return None
        from torch.distributed.tensor import distribute_tensor  # pylint: disable=import-outside-toplevel
        return [None if grad is None else
                distribute_tensor(grad.to(param.device), param.device_mesh, param.placements)
                if is_dtensor(param) else grad.to(param.device) for grad, param in zip(grads, params)]

    restore_accumulation(model, payload.get("accumulation") or [], slices)
