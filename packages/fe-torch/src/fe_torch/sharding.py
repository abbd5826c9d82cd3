"""Sharded data parallel on torch: FSDP2 (`torch.distributed.fsdp.fully_shard`), asked for with `fe.build(...,
sharding="fsdp")` or `fe.build(..., sharding=fe.distributed.FSDP(...))`.

Why an argument of `build` (and not of the Estimator): sharding changes what a model *is* (its parameters become
DTensors, each process holding a slice), and the optimizer must be created on those slices, so it has to happen where
fe creates the optimizer: in `build`, after the model is sharded and before `optimizer_fn` runs. It is per model
(a GAN may shard its large generator and replicate its small discriminator), like `mixed_precision`. `"fsdp"` takes
the defaults; an `FSDP(...)` object says how (the knobs Lightning's FSDP strategy has, under FSDP2's names).

Sharding needs the process group, which exists when a launcher (torchrun) started several processes: in one process,
`sharding=` is refused before training with one line (build the model without sharding there; a sharded run's
checkpoints and saved weights load into it). TensorFlow models cannot be sharded (fe_core's `build` says so).

Under `build`, `model_fn` runs on the meta device and each process materialises only its slices
(`fe_torch.sharded_build`); buffers are replicated and follow rank 0, as under DDP (`sync_buffers`).

A sharded model trains through FSDP2's own hooks: its forward all-gathers each unit's parameters, its backward
reduce-scatters the gradients into each process's slice, and the optimizer steps the slices. So a sharded model is not
wrapped in DistributedDataParallel (`fe_torch.distributed.wrap_model` records the model as its own wrapper).
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Type, Union

import torch
from fe_core.config_error import ConfigurationError, ConfigurationTypeError
from fe_core.export import fe_export

__all__ = ["FSDP", "resolve_sharding", "shard_model", "is_sharded", "check_optimizers", "DEFAULT_MIN_PARAMS",
           "check_torch_version", "check_world", "check_tied_parameters", "checkpoint_activations",
           "sharded_parameters", "record_sharded_parameters", "reshard", "shard_gradients", "sync_buffers",
           "rank0_buffers", "graph_leaves", "offload_on_cpu_error", "MIN_TORCH"]

#: The first torch release whose FSDP2 (`torch.distributed.fsdp.fully_shard`, DTensor parameters) fe relies on.
MIN_TORCH = (2, 6)

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
            the backward): less memory, one more all-gather per unit and step. False keeps them until the backward
            pass (faster, more memory); training is the same either way.
        activation_checkpointing: Module classes whose instances recompute their forward pass during the backward
            pass instead of keeping its activations (`torch.utils.checkpoint`, non-reentrant): a transformer's block
            class, typically the same classes as `policy`. Less memory for one more forward pass of those modules;
            the results are the same.

    Example:
        >>> FSDP(min_params=10_000, mixed_precision=True)  # doctest: +NORMALIZE_WHITESPACE
        FSDP(min_params=10000, policy=None, mixed_precision=True, cpu_offload=False, reshard_after_forward=True,
             activation_checkpointing=None)
    """

    def __init__(self, min_params: int = DEFAULT_MIN_PARAMS, policy: Policy = None, mixed_precision: Any = False,
                 cpu_offload: bool = False, reshard_after_forward: bool = True,
                 activation_checkpointing: Optional[Sequence[Type[torch.nn.Module]]] = None) -> None:
        if isinstance(min_params, bool) or not isinstance(min_params, int) or min_params < 1:
            raise ConfigurationError(f"FSDP(min_params=...) must be a positive integer, got {min_params!r}")
        if policy is not None and not callable(policy) and not (
                isinstance(policy, (list, tuple)) and policy and
                all(isinstance(kind, type) and issubclass(kind, torch.nn.Module) for kind in policy)):
            raise ConfigurationTypeError(f"FSDP(policy=...) must be a list of torch.nn.Module classes or a function "
                                         f"module -> bool, got {policy!r:.80}")
        if activation_checkpointing is not None and not (
                isinstance(activation_checkpointing, (list, tuple)) and activation_checkpointing and
                all(isinstance(kind, type) and issubclass(kind, torch.nn.Module) for kind in activation_checkpointing)):
            raise ConfigurationTypeError(f"FSDP(activation_checkpointing=...) must be a list of torch.nn.Module "
                                         f"classes, got {activation_checkpointing!r:.80}")
        self.min_params = min_params
        self.policy = policy
        self.activation_checkpointing = None if activation_checkpointing is None else tuple(activation_checkpointing)
        self.mixed_precision = mixed_precision
        self.cpu_offload = bool(cpu_offload)
        self.reshard_after_forward = bool(reshard_after_forward)

    def __repr__(self) -> str:
        return (f"FSDP(min_params={self.min_params}, policy={self.policy!r}, mixed_precision={self.mixed_precision!r}, "
                f"cpu_offload={self.cpu_offload}, reshard_after_forward={self.reshard_after_forward}, "
                f"activation_checkpointing={_class_names(self.activation_checkpointing)})")

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
        """The submodules to shard as their own units, children before parents (the root is not listed).

        Containers (`ModuleList`, `ModuleDict`, any module without a forward of its own) are never units: FSDP2
        gathers a unit's parameters in its forward hooks, which a module that is never called never runs; their
        parameters go to the unit above them."""
        chosen: List[torch.nn.Module] = []
        if self.policy is not None:
            kinds = tuple(self.policy) if isinstance(self.policy, (list, tuple)) else None
            for module in _post_order(model):
                if module is not model and not _is_container(module) and (
                        isinstance(module, kinds) if kinds else bool(self.policy(module))):
                    chosen.append(module)
            return chosen
        remaining = {}  # a module's parameters not inside a unit below it
        for module in _post_order(model):
            count = sum(parameter.numel() for parameter in module.parameters(recurse=False))
            count += sum(remaining[id(child)] for child in module.children())
            if module is not model and count >= self.min_params and not _is_container(module):
                chosen.append(module)
                count = 0
            remaining[id(module)] = count
        return chosen


def _class_names(kinds: Optional[Sequence[type]]) -> Optional[List[str]]:
    return None if kinds is None else [kind.__name__ for kind in kinds]


def _is_container(module: torch.nn.Module) -> bool:
    """A module that is never called: `ModuleList`, `ModuleDict`, `ParameterList`, or no forward of its own."""
    return type(module).forward is torch.nn.Module.forward or isinstance(
        module, (torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.ParameterList, torch.nn.ParameterDict))


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


def _torch_version() -> Tuple[int, int]:
    """(major, minor) of the installed torch ('2.13.0+cpu' -> (2, 13))."""
    parts = torch.__version__.split("+")[0].split(".")
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


def check_torch_version(model_name: str) -> None:
    """Refuse sharding on a torch older than FSDP2 needs, in one line naming the version.

    Raises:
        ConfigurationError: On torch < 2.6.
    """
    found = _torch_version()
    if found < MIN_TORCH:
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r} needs torch >= "
                                 f"{MIN_TORCH[0]}.{MIN_TORCH[1]} (FSDP2's fully_shard); this is torch "
                                 f"{torch.__version__}: upgrade torch, or build without sharding (DDP)")


def resolve_sharding(sharding: Any, model_name: str) -> FSDP:
    """`build`'s `sharding` argument as an `FSDP` object ('fsdp' means the defaults).

    Raises:
        ConfigurationError: For anything else, or on a torch without FSDP2.
    """
    if isinstance(sharding, FSDP):
        spec = sharding
    elif isinstance(sharding, str) and sharding.lower() == "fsdp":
        spec = FSDP()
    else:
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r} must be 'fsdp' or "
                                 f"fe.distributed.FSDP(...), got {sharding!r:.60}")
    check_torch_version(model_name)
    return spec


def check_world(model_name: str, world_size: Optional[int]) -> None:
    """Raises:
        ConfigurationError: Without a process group of several processes (one line, before any training).
    """
    if not world_size or world_size < 2:
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r} needs several processes: start "
                                 f"the script with `torchrun --nproc_per_node N` (in one process, build the model "
                                 f"without sharding; a sharded run's checkpoints and saved weights load into it)")


def shard_model(model: torch.nn.Module, spec: FSDP, model_name: str, world_size: Optional[int],
                offload_checked: bool = False) -> torch.nn.Module:
    """Shard `model` in place (its units, then the root) over the default process group. The model may be on the meta
    device (`fe_torch.sharded_build` materialises its slices afterwards) or on this process's device.

    Raises:
        ConfigurationError: Without a process group of several processes, for a torch.compile'd model, for CPU
            offload of a model computing on the CPU, or for parameters shared by two units (one line each, before
            any training).
    """
    check_world(model_name, world_size)
    if is_sharded(model):
        return model
    if hasattr(model, "_orig_mod"):  # torch.compile's OptimizedModule: FSDP2 would shard the wrapper's internals
        raise ConfigurationError(f"build(sharding=...) of torch model {model_name!r}: model_fn returned a "
                                 f"torch.compile'd model, which fe cannot shard; return the plain module (a sharded "
                                 f"model trains uncompiled in fe)")
    if spec.cpu_offload and not offload_checked and all(
            parameter.device.type == "cpu" for parameter in model.parameters()):
        raise offload_on_cpu_error(model_name)
    from torch.distributed.fsdp import fully_shard  # pylint: disable=import-outside-toplevel
    kwargs = spec.shard_kwargs()
    units = spec.units(model) + [model]
    check_tied_parameters(model, units, model_name)
    if spec.activation_checkpointing:
        checkpoint_activations(model, spec.activation_checkpointing)
    slots = _parameter_slots(model)
    managed = _managed_parameters(units)
    for unit in units:
        fully_shard(unit, **kwargs)
    leaves: dict = {}
    model.__dict__["fe_graph_leaves"] = leaves
    model.__dict__["fe_parameter_slots"] = slots
    for unit, owned in zip(units, managed):
        # registered after fully_shard's own pre-forward hook (prepended), so it runs once the unit's parameters
        # have been all-gathered and set on their modules: those tensors are what this forward pass computes with
        unit.register_forward_pre_hook(_recorder(owned, leaves))
    model.fe_sharding = spec
    if not any(parameter.is_meta for parameter in model.parameters()):
        record_sharded_parameters(model)
    return model


def offload_on_cpu_error(model_name: str) -> ConfigurationError:
    """CPU offload asked for by a run that computes on the CPU (one line)."""
    return ConfigurationError(f"build(sharding=FSDP(cpu_offload=True)) of torch model {model_name!r}: this run "
                              f"computes on the CPU, where the model's slices already are (CPU offload moves them "
                              f"off an accelerator); leave cpu_offload off")


def check_tied_parameters(model: torch.nn.Module, units: List[torch.nn.Module], model_name: str) -> None:
    """Refuse a parameter shared by modules of two different units: FSDP2 would shard it in one unit and leave the
    other unit computing with a stale or freed copy.

    Raises:
        ConfigurationError: Naming the parameter's two places and what to do.
    """
    unit_of: dict = {}  # id(module) -> its nearest unit (units are listed children first)
    for unit in units:
        for module in unit.modules():
            unit_of.setdefault(id(module), unit)
    names = {id(unit): name or "<root>" for name, unit in model.named_modules() if any(unit is u for u in units)}
    first: dict = {}  # id(parameter) -> (unit, qualified name)
    for module_name, module in model.named_modules(remove_duplicate=False):
        for name, parameter in module.named_parameters(recurse=False, remove_duplicate=False):
            place = f"{module_name}.{name}" if module_name else name
            unit = unit_of[id(module)]
            seen = first.setdefault(id(parameter), (unit, place))
            if seen[0] is not unit:
                raise ConfigurationError(
                    f"build(sharding=...) of torch model {model_name!r}: parameter {seen[1]!r} is tied to "
                    f"{place!r}, and they fall in different FSDP units ({names[id(seen[0])]!r} and "
                    f"{names[id(unit)]!r}); choose units that keep tied parameters together (FSDP(policy=...) "
                    f"without the modules holding them, or a larger min_params)")


def checkpoint_activations(model: torch.nn.Module, kinds: Sequence[type]) -> None:
    """Make every submodule of one of `kinds` recompute its forward pass in the backward pass (non-reentrant
    `torch.utils.checkpoint`). The module's `forward` is replaced on the instance, so its parameters, hooks and
    state-dict keys are unchanged (FSDP2's hooks still run once per call, around the checkpointed forward)."""
    from torch.utils.checkpoint import checkpoint  # pylint: disable=import-outside-toplevel
    for module in model.modules():
        if isinstance(module, tuple(kinds)) and "forward" not in module.__dict__:
            forward = module.forward

            def checkpointed(*args: Any, _forward: Callable[..., Any] = forward, **kwargs: Any) -> Any:
                if not torch.is_grad_enabled():
                    return _forward(*args, **kwargs)
                return checkpoint(_forward, *args, use_reentrant=False, **kwargs)

            module.forward = checkpointed


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
            leaves[(id(owner), name)] = getattr(owner, name)

    return record


def _parameter_slots(model: torch.nn.Module) -> List[Tuple[torch.nn.Module, str]]:
    """(module, attribute name) of each of the model's parameters, in `model.parameters()` order."""
    slots, seen = [], set()
    for module in model.modules():
        for name, parameter in module.named_parameters(recurse=False):
            if id(parameter) not in seen:
                seen.add(id(parameter))
                slots.append((module, name))
    return slots


def record_sharded_parameters(model: torch.nn.Module) -> None:
    """Remember a sharded model's parameters (the DTensors holding each process's slices, which its optimizer steps)
    while no forward pass has gathered them. Between a forward and its backward FSDP2 sets the gathered full tensors
    on the modules (always with `reshard_after_forward=False`, and for the root unit on some torch versions), so
    `model.parameters()` is not the slices then; training reads these instead (`sharded_parameters`)."""
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    parameters = [getattr(module, name) for module, name in model.__dict__["fe_parameter_slots"]]
    if not all(isinstance(parameter, DTensor) for parameter in parameters):
        raise RuntimeError(f"Sharded torch model {getattr(model, 'model_name', type(model).__name__)!r}: its "
                           f"parameters are not all sharded (DTensors) at the end of build")
    model.__dict__["fe_sharded_parameters"] = parameters


def sharded_parameters(model: torch.nn.Module) -> List[torch.Tensor]:
    """A sharded model's parameters as slices (DTensors), in `model.parameters()` order, whatever FSDP2 has set on
    the modules at this moment."""
    recorded = model.__dict__.get("fe_sharded_parameters")
    if recorded is None:
        record_sharded_parameters(model)
        recorded = model.__dict__["fe_sharded_parameters"]
    return list(recorded)


def sync_buffers(model: torch.nn.Module, source: int = 0) -> None:
    """Copy rank `source`'s buffers (a BatchNorm's running statistics, ...) to every process, as DDP does at
    construction and before each training forward pass (`broadcast_buffers=True`): FSDP2 shards parameters only,
    and each process's buffers would otherwise follow its own part of the data. One broadcast per dtype.

    The buffers are listed once per model (kept in `model.__dict__["fe_buffer_groups"]`), not at every step: like DDP,
    which lists them when it wraps the model, a buffer later replaced by another tensor object is not followed."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    groups = model.__dict__.get("fe_buffer_groups")
    if groups is None:
        by_kind: dict = {}
        for buffer in model.buffers():
            if buffer.numel():
                by_kind.setdefault((buffer.dtype, buffer.device), []).append(buffer)
        groups = model.__dict__["fe_buffer_groups"] = list(by_kind.values())
    for group in groups:
        flat = torch.cat([buffer.detach().reshape(-1) for buffer in group])
        dist.broadcast(flat, src=source)
        offset = 0
        with torch.no_grad():
            for buffer in group:
                size = buffer.numel()
                buffer.copy_(flat[offset:offset + size].view_as(buffer))
                offset += size


def shard_gradients(params: Sequence[torch.Tensor],
                    gradients: List[Optional[torch.Tensor]]) -> List[Optional[torch.Tensor]]:
    """Whole gradients of a sharded model's weights computed outside FSDP2's backward (`UpdateOp(gradients=...)`
    fed by a GradientOp, which differentiates the gathered weights) as the slices' gradients: averaged over the
    processes in the slices' dtype (one all-reduce, as DDP's path does), then each process keeps its rows (FSDP2's
    layout: `torch.chunk` along the first axis, empty chunks for ranks past the end)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    from fe_torch import distributed  # pylint: disable=import-outside-toplevel
    cast = [None if gradient is None else gradient.detach().to(dtype=param.dtype, device=param.to_local().device)
            for param, gradient in zip(params, gradients)]
    averaged = distributed.average_gradients(cast)
    world, rank = dist.get_world_size(), dist.get_rank()
    sliced: List[Optional[torch.Tensor]] = []
    for param, gradient in zip(params, averaged):
        if gradient is None:
            sliced.append(None)
            continue
        if tuple(gradient.shape) != tuple(param.shape):
            raise ValueError(f"A gradient of shape {tuple(gradient.shape)} was given for a sharded parameter of "
                             f"shape {tuple(param.shape)} (UpdateOp(gradients=...) takes the whole gradients, as a "
                             f"GradientOp of the model computes them)")
        chunks = list(torch.chunk(gradient, world, dim=0))
        local = chunks[rank] if rank < len(chunks) else gradient.new_empty((0, *gradient.shape[1:]))
        sliced.append(DTensor.from_local(local.contiguous(), param.device_mesh, param.placements, run_check=False,
                                         shape=param.shape, stride=param.stride()))
    return sliced


@contextlib.contextmanager
def rank0_buffers(models: Sequence[torch.nn.Module]) -> Iterator[None]:
    """Inside: every process holds rank 0's buffers of `models`; afterwards each has its own back."""
    own = [[buffer.detach().clone() for buffer in model.buffers()] for model in models]
    for model in models:
        sync_buffers(model)
    try:
        yield
    finally:
        with torch.no_grad():
            for model, saved in zip(models, own):
                for buffer, value in zip(model.buffers(), saved):
                    buffer.copy_(value)


def reshard(model: torch.nn.Module) -> None:
    """Free every unit's gathered parameters (FSDP2's public `FSDPModule.reshard`), so that the modules hold their
    slices again: after forward passes without a backward (evaluation) with `reshard_after_forward=False`, or the
    root unit on torch versions that keep it gathered after the forward pass. Cheap when already sharded."""
    from torch.distributed.fsdp import FSDPModule  # pylint: disable=import-outside-toplevel
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.reshard()


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
    """The tensors a sharded model's forward pass computed with, in `model.parameters()` order (frozen ones left
    out): the gathered (unsharded) parameters that FSDP2 sets on each unit's modules while it runs (its documented
    behaviour: "the unsharded parameters will be like the original parameters on module"), recorded by a forward
    pre-hook of each unit (`shard_model`). A backward pass restricted to them (`torch.autograd.backward(inputs=...)`)
    reaches this model only - not another model whose graph the loss also passes through (a GAN's) - and FSDP2's
    hooks then reduce-scatter their gradients into the slices' `.grad`. Only public torch API: module hooks and
    module attributes."""
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    recorded = model.__dict__.get("fe_graph_leaves") or {}
    leaves = []
    for module, name in model.__dict__.get("fe_parameter_slots") or ():
        tensor = recorded.get((id(module), name))
        if isinstance(tensor, torch.Tensor) and not isinstance(tensor, DTensor) and tensor.requires_grad:
            leaves.append(tensor)
    if not leaves:
        raise RuntimeError(f"Sharded torch model {getattr(model, 'model_name', type(model).__name__)!r} has not run "
                           f"its forward pass in this step, so it has no gradients to compute")
    return leaves
