"""Sharded data parallel on torch: FSDP2 (`torch.distributed.fsdp.fully_shard`), asked for with `fe.build(...,
sharding="fsdp")` or `fe.build(..., sharding=fe.distributed.FSDP(...))`.

Why an argument of `build` (and not of the Estimator): sharding changes what a model *is* (its parameters become
DTensors, each process holding a slice), and the optimizer must be created on those slices, so it has to happen where
fe creates the optimizer: in `build`, after the model is on its device and before `optimizer_fn` runs. It is per model
(a GAN may shard its large generator and replicate its small discriminator), like `mixed_precision`. `"fsdp"` takes
the defaults; an `FSDP(...)` object says how (the knobs Lightning's FSDP strategy has, under FSDP2's names).

Sharding needs the process group, which exists when a launcher (torchrun) started several processes: in one process,
`sharding=` is refused before training with one line (build the model without sharding there; a sharded run's
checkpoints and saved weights load into it). TensorFlow models cannot be sharded (fe_core's `build` says so).

A sharded model trains through FSDP2's own hooks: its forward all-gathers each unit's parameters, its backward
reduce-scatters the gradients into each process's slice, and the optimizer steps the slices. So a sharded model is not
wrapped in DistributedDataParallel (`fe_torch.distributed.wrap_model` records the model as its own wrapper).
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple, Type, Union

import torch
from fe_core.config_error import ConfigurationError, ConfigurationTypeError
from fe_core.export import fe_export

__all__ = ["FSDP", "resolve_sharding", "shard_model", "is_sharded", "check_optimizers", "DEFAULT_MIN_PARAMS"]

DEFAULT_MIN_PARAMS = 1_000_000  # a submodule with at least this many parameters (not counting sharded children)

Policy = Union[None, Callable[[torch.nn.Module], bool], Sequence[Type[torch.nn.Module]]]

# Optimizers that cannot step DTensor slices: L-BFGS flattens every parameter into one vector and re-evaluates a
# closure; SparseAdam needs sparse gradients, which FSDP never produces.
_UNSHARDABLE_OPTIMIZERS: Tuple[Type[torch.optim.Optimizer], ...] = (torch.optim.LBFGS, torch.optim.SparseAdam)


@fe_export("fe.distributed.FSDP")
class FSDP:
    """How to shard a torch model with FSDP2: give it to `fe.build(..., sharding=FSDP(...))`.

    Each process keeps one slice of every parameter, gradient and optimizer state (DTensors), and the forward pass
    gathers a unit's full parameters only while that unit runs. The units: every submodule whose own parameters (not
    counting those of units below it) number at least `min_params`, chosen bottom-up, and then the whole model - what
    FSDP's size-based auto-wrap does. `policy` replaces the size rule.

    Args:
        min_params: The size rule's threshold (parameters per unit).
        policy: Which submodules become units instead of the size rule: a list of module classes (e.g. a
            transformer's block class), or a function `module -> bool`. The root is always a unit.
        mixed_precision: True: compute with bfloat16 parameters and reduce gradients in float32 (FSDP2's
            `MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)`); a `MixedPrecisionPolicy` is used as
            given. The slices and the optimizer stay float32.
        cpu_offload: Keep the slices, their gradients and the optimizer state in host memory (FSDP2's
            `CPUOffloadPolicy`); each unit's parameters are copied to the device when it runs.
        reshard_after_forward: Free each unit's gathered parameters after its forward pass (gather them again for
            the backward): less memory, one more all-gather per unit and step.

    Example:
        >>> FSDP(min_params=10_000, mixed_precision=True)
        FSDP(min_params=10000, policy=None, mixed_precision=True, cpu_offload=False, reshard_after_forward=True)
    """

    def __init__(self, min_params: int = DEFAULT_MIN_PARAMS, policy: Policy = None, mixed_precision: Any = False,
                 cpu_offload: bool = False, reshard_after_forward: bool = True) -> None:
        if isinstance(min_params, bool) or not isinstance(min_params, int) or min_params < 1:
            raise ConfigurationError(f"FSDP(min_params=...) must be a positive integer, got {min_params!r}")
        if policy is not None and not callable(policy) and not (
                isinstance(policy, (list, tuple)) and policy and
                all(isinstance(kind, type) and issubclass(kind, torch.nn.Module) for kind in policy)):
            raise ConfigurationTypeError(f"FSDP(policy=...) must be a list of torch.nn.Module classes or a function "
                                         f"module -> bool, got {policy!r:.80}")
        self.min_params = min_params
        self.policy = policy
        self.mixed_precision = mixed_precision
        self.cpu_offload = bool(cpu_offload)
        self.reshard_after_forward = bool(reshard_after_forward)

    def __repr__(self) -> str:
        return (f"FSDP(min_params={self.min_params}, policy={self.policy!r}, mixed_precision={self.mixed_precision!r}, "
                f"cpu_offload={self.cpu_offload}, reshard_after_forward={self.reshard_after_forward})")

    # ----- what fully_shard gets
    def shard_kwargs(self) -> dict:
        """The keyword arguments of every `fully_shard` call."""
        from torch.distributed.fsdp import (  # pylint: disable=import-outside-toplevel
            CPUOffloadPolicy, MixedPrecisionPolicy)
        kwargs: dict = {"reshard_after_forward": self.reshard_after_forward}
        if isinstance(self.mixed_precision, MixedPrecisionPolicy):
            kwargs["mp_policy"] = self.mixed_precision
        elif self.mixed_precision:
            kwargs["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        if self.cpu_offload:
            kwargs["offload_policy"] = CPUOffloadPolicy()
        return kwargs

    def units(self, model: torch.nn.Module) -> List[torch.nn.Module]:
        """The submodules to shard as their own units, children before parents (the root is not listed)."""
        chosen: List[torch.nn.Module] = []
        if self.policy is not None:
            kinds = tuple(self.policy) if isinstance(self.policy, (list, tuple)) else None
            for module in _post_order(model):
                if module is not model and (isinstance(module, kinds) if kinds else bool(self.policy(module))):
                    chosen.append(module)
            return chosen
        remaining = {}  # a module's parameters not inside a unit below it
        for module in _post_order(model):
            count = sum(parameter.numel() for parameter in module.parameters(recurse=False))
            count += sum(remaining[id(child)] for child in module.children())
            if module is not model and count >= self.min_params:
                chosen.append(module)
                count = 0
            remaining[id(module)] = count
        return chosen


def _post_order(module: torch.nn.Module) -> List[torch.nn.Module]:
    order: List[torch.nn.Module] = []
    seen = set()

    def visit(node: torch.nn.Module) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        for child in node.children():
            visit(child)
        order.append(node)

    visit(module)
    return order


def resolve_sharding(sharding: Any, model_name: str) -> FSDP:
    """`build`'s `sharding` argument as an `FSDP` object ('fsdp' means the defaults).

    Raises:
        ConfigurationError: For anything else.
    """
    if isinstance(sharding, FSDP):
        return sharding
    if isinstance(sharding, str) and sharding.lower() == "fsdp":
        return FSDP()
    raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r} must be 'fsdp' or "
                             f"fe.distributed.FSDP(...), got {sharding!r:.60}")


def shard_model(model: torch.nn.Module, spec: FSDP, model_name: str, world_size: Optional[int]) -> torch.nn.Module:
    """Shard `model` in place (its units, then the root) over the default process group.

    Raises:
        ConfigurationError: Without a process group of several processes (one line, before any training).
    """
    if not world_size or world_size < 2:
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r} needs several processes: start "
                                 f"the script with `torchrun --nproc_per_node N` (in one process, build the model "
                                 f"without sharding; a sharded run's checkpoints and saved weights load into it)")
    if is_sharded(model):
        return model
    if hasattr(model, "_orig_mod"):  # torch.compile's OptimizedModule: FSDP2 would shard the wrapper's internals
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r}: model_fn returned a "
                                 f"torch.compile'd model, which fe cannot shard; return the plain module (a sharded "
                                 f"model trains uncompiled in fe)")
    if spec.cpu_offload and all(parameter.device.type == "cpu" for parameter in model.parameters()):
        raise ConfigurationError(f"build(sharding=FSDP(cpu_offload=True)) of torch model {model_name!r}: this run "
                                 f"computes on the CPU, where the model's slices already are (CPU offload moves them "
                                 f"off an accelerator); leave cpu_offload off")
    from torch.distributed.fsdp import fully_shard  # pylint: disable=import-outside-toplevel
    kwargs = spec.shard_kwargs()
    units = spec.units(model) + [model]
    managed = _managed_parameters(units)
    for unit in units:
        fully_shard(unit, **kwargs)
    leaves: dict = {}
    model.__dict__["fe_graph_leaves"] = leaves
    for unit, owned in zip(units, managed):
        # registered after fully_shard's own pre-forward hook (prepended), so it runs once the unit's parameters
        # have been all-gathered and set on their modules: those tensors are what this forward pass computes with
        unit.register_forward_pre_hook(_recorder(owned, leaves))
    model.fe_sharding = spec
    return model


def _managed_parameters(units: List[torch.nn.Module]) -> List[List[Tuple[torch.nn.Module, str]]]:
    """For each unit (children before parents), where its own parameters live: (module, attribute name) of every
    parameter not already in a unit below it - the parameters `fully_shard` groups into that unit."""
    taken = set()
    managed = []
    for unit in units:
        owned = []
        for module in unit.modules():
            for name, parameter in module.named_parameters(recurse=False):
                if id(parameter) not in taken:
                    taken.add(id(parameter))
                    owned.append((module, name))
        managed.append(owned)
    return managed


def _recorder(owned: List[Tuple[torch.nn.Module, str]], leaves: dict) -> Callable[..., None]:
    def record(module: torch.nn.Module, args: Any) -> None:  # pylint: disable=unused-argument
        for owner, name in owned:
            tensor = getattr(owner, name)
            leaves[(id(owner), name)] = tensor

    return record


def is_sharded(model: Any) -> bool:
    """Whether `model` was sharded by `build(sharding=...)`."""
    return isinstance(model, torch.nn.Module) and model.__dict__.get("fe_sharding") is not None


def check_optimizers(model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer], model_name: str) -> None:
    """Refuse, before training, optimizers that cannot step a sharded model's slices.

    Raises:
        ConfigurationError: For L-BFGS / SparseAdam, or an optimizer holding tensors that are not the model's sharded
            parameters (an `optimizer_fn` that ignored the parameters it was given).
    """
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    owned = {id(parameter) for parameter in model.parameters()}
    for optimizer in optimizers:
        if isinstance(optimizer, _UNSHARDABLE_OPTIMIZERS):
            raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r}: FSDP cannot shard a "
                                     f"{type(optimizer).__name__} optimizer (it needs whole parameters); use an "
                                     f"element-wise optimizer such as Adam, AdamW or SGD, or build without sharding")
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                if id(parameter) not in owned or not isinstance(parameter, DTensor):
                    raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r}: its optimizer "
                                             f"holds a tensor that is not one of the model's sharded parameters "
                                             f"(optimizer_fn must build the optimizer on the parameters it is "
                                             f"given)")


def graph_leaves(model: torch.nn.Module) -> List[torch.Tensor]:
    """The tensors a sharded model's forward pass computed with: the gathered (unsharded) parameters that FSDP2 sets
    on each unit's modules while it runs (its documented behaviour: "the unsharded parameters will be like the
    original parameters on module"), recorded by a forward pre-hook of each unit (`shard_model`). A backward pass
    restricted to them (`torch.autograd.backward(inputs=...)`) reaches this model only - not another model whose graph
    the loss also passes through (a GAN's) - and FSDP2's hooks then reduce-scatter their gradients into the slices'
    `.grad`. Only public torch API: module hooks and module attributes."""
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    recorded = model.__dict__.get("fe_graph_leaves") or {}
    leaves = [tensor for tensor in recorded.values()
              if isinstance(tensor, torch.Tensor) and not isinstance(tensor, DTensor) and tensor.requires_grad]
    if not leaves:
        raise RuntimeError(f"Sharded torch model {getattr(model, 'model_name', type(model).__name__)!r} has not run "
                           f"its forward pass in this step, so it has no gradients to compute")
    return leaves
