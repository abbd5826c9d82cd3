"""Building a sharded model without it ever existing whole in one process (torchtitan's recipe, with fe's seeding).

Under `fe.build(..., sharding=...)` in a distributed run, `model_fn` runs on the meta device (shapes only, no memory,
no random numbers drawn), `fe_torch.sharding.shard_model` applies `fully_shard`, `to_empty` gives each process
uninitialised memory for its slices only, and the weights are then initialised *module by module*:

- **Replay of `reset_parameters()`** (the usual case): every process replays the initialisation of each module with
  own parameters or buffers, in module order, from the random state `model_fn` started with: the module's parameters
  are made whole on the CPU for the duration of its `reset_parameters()` (one module at a time), and each process
  copies its rows into its slices. So every process draws the same random numbers as one process running
  `model_fn()` does, the initial weights equal the one-process run's bit for bit, and no process holds more than one
  module's weights whole. Used only when it provably repeats what `model_fn` did: during the meta build fe records
  the in-place initialisations (`nn.init.*`, `uniform_`, `zero_`, ...) and random draws in the order they ran,
  replays the same calls on the meta model first, and compares the two lists; every parameter and buffer must be
  written by the replay. A write through another tensor object on a weight's memory counts as a write of that
  weight (`weight.data.normal_()`, as DCGAN and Hugging Face initialise; `weight[0].fill_()` as a write of part of
  it), and `torch.nn.init`'s functions are recorded as one call each, since several of them do nothing on the meta
  device (`orthogonal_`, `trunc_normal_`, `sparse_`, `dirac_`); one imported by name, out of sight, reads the
  weight's `is_meta`, and the model is then built by rank 0.
- **Replay of `model_fn`'s own calls** (initialisation after construction, as fe's UNet and WideResNet do): when
  the recorded calls on the model's tensors form one run of in-place calls with no other tensor as input, and each
  tensor is set whole by one of them, they are replayed as they ran, each on a whole CPU copy of its tensor (calls
  before a tensor's last whole overwrite on a scratch tensor: only their random draws matter). Bit for bit again.
- **Rank 0 builds** (the fallback, with a warning saying why): a model neither replay can repeat (weights copied from
  other tensors, a buffer made by `torch.arange` that nothing sets in place, weights tied after construction) is
  built by `model_fn()` on rank 0's CPU, and its weights are broadcast one tensor at a time into every process's
  slices. Only rank 0 holds the whole model then, and only during the build.

Buffers are replicated (FSDP2 shards parameters only) and synchronised from rank 0, as DDP does.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["scope", "prepare", "materialize", "is_meta", "broadcast_module_state", "Prepared"]

# Functions that draw random numbers (the others that matter are in-place writes into a parameter or buffer)
_RANDOM = frozenset({
    "uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
    "trunc_normal_", "orthogonal_", "sparse_", "random_", "exponential_", "geometric_", "log_normal_", "cauchy_",
    "bernoulli_", "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "rand_like",
    "randn_like", "randint_like", "poisson"})


# In-place methods that change no value (a frozen layer is still replayable)
_NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad", "pin_memory_"})


def _call_name(func: Any) -> str:
    """A call's name; `tensor.data = ...` is a write named 'data=' (other attribute assignments are not recorded)."""
    name = getattr(func, "__name__", "")
    owner = getattr(getattr(func, "__self__", None), "__name__", None)
    if name == "__set__" and owner == "data":
        return "data="
    if name == "__get__" and owner == "is_meta":
        return "is_meta"
    return name


class _Recorder(TorchFunctionMode):
    """Records, in order, each top-level call that draws random numbers or writes a tensor in place (`torch.nn.init`'s
    functions as one call each, see `_recording`), and the tensors whose `is_meta` was read (an initialisation that
    does nothing on the meta device, such as `orthogonal_` imported by name, which no record would show)."""

    def __init__(self, keep: bool = False) -> None:
        super().__init__()
        self.calls: List[Tuple[str, Any]] = []
        self.keep = keep  # also keep each call's function and arguments (to replay them)
        self.replayable: List[Tuple[Any, tuple, dict]] = []
        self.meta_reads: List[torch.Tensor] = []
        self.depth = 0  # inside a call recorded whole: its own calls are not recorded

    def _add(self, name: str, target: Any, func: Any, args: Sequence[Any], kwargs: dict) -> None:
        self.calls.append((name, target if isinstance(target, torch.Tensor) else None))
        if self.keep:
            self.replayable.append((func, tuple(args), dict(kwargs)))

    def record(self, name: str, func: Any, args: Sequence[Any], kwargs: dict) -> Any:
        """Run `func` (a `torch.nn.init` function) recorded as one call, whatever it does inside."""
        if self.depth:
            return func(*args, **kwargs)
        self._add(name, args[0] if args else kwargs.get("tensor"), func, args, kwargs)
        self.depth += 1
        try:
            return func(*args, **kwargs)
        finally:
            self.depth -= 1

    def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if self.depth:
            return func(*args, **kwargs)
        name = _call_name(func)
        if name == "is_meta":
            if args and isinstance(args[0], torch.Tensor):
                self.meta_reads.append(args[0])
        elif name == "data=" or (not name.startswith("__") and name not in _NOT_WRITES and (
                name in _RANDOM or name.endswith("_"))):
            self._add(name, args[0] if args else kwargs.get("tensor", kwargs.get("input")), func, args, kwargs)
        elif isinstance(kwargs.get("out"), torch.Tensor):  # torch.eye(..., out=weight) writes weight
            self._add(f"{name}(out=)", kwargs["out"], func, args, kwargs)
        return func(*args, **kwargs)


@contextlib.contextmanager
def _recording(recorder: _Recorder) -> Iterator[None]:
    """Inside: `recorder` records, and each public `torch.nn.init` function called through the module (as
    `nn.init.orthogonal_`) is recorded as one call. Several of them do nothing on the meta device (`orthogonal_`,
    `trunc_normal_`, `sparse_`, `dirac_`) or write through `out=` (`eye_`), so their own calls would not show them."""
    import torch.nn.init as init  # pylint: disable=import-outside-toplevel,consider-using-from-import
    originals = {name: getattr(init, name) for name in dir(init)
                 if name.endswith("_") and not name.startswith("_") and callable(getattr(init, name))}

    def wrap(name: str, func: Any) -> Any:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            return recorder.record(name, func, args, kwargs)
        recorded.__wrapped__ = func  # type: ignore[attr-defined]
        return recorded

    for name, func in originals.items():
        setattr(init, name, wrap(name, func))
    try:
        with recorder:
            yield
    finally:
        for name, func in originals.items():
            setattr(init, name, func)


class _Pending:
    """What the meta build of one `build` call left for `materialize`: its calls, random state and `model_fn`."""

    def __init__(self, model_fn: Callable[[], Any], rng: torch.Tensor, calls: List[Tuple[str, Any]],
                 replayable: List[Tuple[Any, tuple, dict]], meta_reads: List[torch.Tensor]) -> None:
        self.model_fn = model_fn
        self.rng = rng
        self.calls = calls
        self.replayable = replayable
        self.meta_reads = meta_reads
        self.cursor = 0  # calls already matched by the models materialised so far
        self.index = 0  # the next model (model_fn may return several)
        self.whole: Optional[List[torch.nn.Module]] = None  # rank 0's fallback build, once made
        self.reason: Optional[str] = None


_pending: Optional[_Pending] = None


@contextlib.contextmanager
def scope(model_fn: Callable[[], Any]) -> Iterator[None]:
    """Run `model_fn` (inside this context) on the meta device, recording its initialisation calls."""
    global _pending  # pylint: disable=global-statement
    rng = torch.get_rng_state()
    recorder = _Recorder(keep=True)
    _pending = None
    try:
        with torch.device("meta"), _recording(recorder):
            yield
    except BaseException:
        torch.set_rng_state(rng)  # the caller builds again, without this scope
        raise
    _pending = _Pending(model_fn, rng, recorder.calls, recorder.replayable, recorder.meta_reads)


def is_meta(model: torch.nn.Module) -> bool:
    """Whether `model` (built in `scope`) has no memory yet."""
    return any(tensor.is_meta for tensor in _states(model))


def _states(model: torch.nn.Module) -> Iterator[torch.Tensor]:
    yield from model.parameters()
    yield from model.buffers()


def _names(model: torch.nn.Module) -> Dict[int, str]:
    names: Dict[int, str] = {}
    for name, tensor in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(tensor), name)
    for name, tensor in model.named_buffers(remove_duplicate=False):
        names.setdefault(id(tensor), name)
    return names


def _own(module: torch.nn.Module) -> Tuple[List[Tuple[str, torch.Tensor]], List[Tuple[str, torch.Tensor]]]:
    return ([(name, p) for name, p in module._parameters.items() if p is not None],  # pylint: disable=protected-access
            [(name, b) for name, b in module._buffers.items() if b is not None])  # pylint: disable=protected-access


class _Tensors:
    """A model's parameters and buffers by name, found also through another tensor object on the same memory: its
    `.data`, or a view of it (`weight[0]`, `weight.data[:2]`), which in-place initialisations often write through."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.names = _names(model)
        self.memory: Dict[int, Tuple[str, torch.Tensor]] = {}
        for tensor in _states(model):
            key = _memory(tensor)
            if key is not None:
                self.memory.setdefault(key, (self.names[id(tensor)], tensor))

    def find(self, target: Optional[torch.Tensor]) -> Optional[Tuple[str, bool]]:
        """(name, whether `target` is all of it) of the model's tensor that `target` writes into; None if none."""
        if target is None:
            return None
        name = self.names.get(id(target))
        if name is not None:
            return name, True
        found = self.memory.get(_memory(target))  # type: ignore[arg-type]
        if found is None:
            return None
        name, tensor = found
        whole = (target.shape == tensor.shape and target.stride() == tensor.stride() and target.dtype == tensor.dtype
                 and target.storage_offset() == tensor.storage_offset())
        return name, whole

    def owner(self, target: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        """The model's tensor that `target` is (or is on the memory of); None if none."""
        if target is None:
            return None
        if id(target) in self.names:
            return target
        found = self.memory.get(_memory(target))  # type: ignore[arg-type]
        return None if found is None else found[1]

    def label(self, target: Optional[torch.Tensor]) -> str:
        if target is None:
            return "-"
        found = self.find(target)
        if found is None:
            return "?"
        return found[0] if found[1] else f"part of {found[0]}"


def _memory(tensor: torch.Tensor) -> Optional[int]:
    """Which memory (storage) a tensor lives in, also on the meta device; None for a tensor without storage."""
    try:
        return tensor.untyped_storage()._cdata  # pylint: disable=protected-access
    except (RuntimeError, NotImplementedError, AttributeError):
        return None


def _arguments(call: Tuple[Any, tuple, dict], tensors: _Tensors) -> tuple:
    """A recorded call's arguments, comparable between model_fn's run and the replay: tensors by the model tensor
    they are, numbers and strings by value, other objects (a generator, ...) by type."""
    def value(argument: Any) -> Any:
        if isinstance(argument, torch.Tensor):
            return tensors.label(argument)
        if argument is None or isinstance(argument, (bool, int, float, str, torch.dtype)):
            return argument
        if isinstance(argument, (list, tuple)):
            return tuple(value(item) for item in argument)
        return type(argument).__name__
    _, args, kwargs = call
    return tuple(value(argument) for argument in args), tuple(sorted((k, value(v)) for k, v in kwargs.items()))


def _unseen(model: torch.nn.Module, pending: _Pending) -> Optional[str]:
    """Why the records cannot show how `model_fn` initialised `model` (a function that does nothing on the meta device
    read one of its tensors' `is_meta`), or None."""
    tensors = _Tensors(model)
    found = next((tensors.find(tensor) for tensor in pending.meta_reads if tensors.find(tensor) is not None), None)
    if found is None:
        return None
    return (f"model_fn initialises {found[0]!r} with a function that does nothing on the meta device (it reads "
            f"is_meta; call torch.nn.init's functions through the module, as nn.init.orthogonal_)")


def _replay_plan(model: torch.nn.Module, pending: _Pending) -> Tuple[Optional[List[Tuple[str, str]]], str]:
    """The replay's calls (name, target) when replaying `model` on the meta device repeats what model_fn did, else
    (None, why not)."""
    tensors = _Tensors(model)
    names = tensors.names
    for module in model.modules():
        params, buffers = _own(module)
        if (params or buffers) and not callable(getattr(module, "reset_parameters", None)):
            return None, f"{type(module).__name__} has weights of its own and no reset_parameters()"
    recorder = _Recorder(keep=True)
    with torch.no_grad(), _recording(recorder):
        for module in model.modules():
            params, buffers = _own(module)
            if params or buffers:
                start = len(recorder.calls)
                module.reset_parameters()
                own = {id(tensor) for _, tensor in params + buffers}
                other = next((target for _, target in recorder.calls[start:]
                              if tensors.owner(target) is not None and id(tensors.owner(target)) not in own), None)
                if other is not None:  # the replay gives each module its own weights only (whole, on the CPU)
                    return None, (f"{type(module).__name__}.reset_parameters() sets {tensors.label(other)!r}, which "
                                  f"is not its own")
    replayed = [(name, tensors.label(target)) for name, target in recorder.calls]
    end = pending.cursor + len(replayed)
    recorded = [(name, tensors.label(target)) for name, target in pending.calls[pending.cursor:end]]
    if recorded == replayed:  # the same calls: with the same arguments too (a std set after construction, ...)
        where = next((i for i, (a, b) in enumerate(zip(pending.replayable[pending.cursor:end], recorder.replayable))
                      if _arguments(a, tensors) != _arguments(b, tensors)), None)
        if where is not None:
            return None, (f"model_fn initialised it differently from its modules' reset_parameters() (call {where}: "
                          f"{recorded[where]} with other arguments)")
    if recorded != replayed:
        where = next((i for i, (a, b) in enumerate(zip(recorded, replayed)) if a != b), min(len(recorded),
                                                                                              len(replayed)))
        return None, (f"model_fn initialised it differently from its modules' reset_parameters() (call {where}: "
                      f"{recorded[where] if where < len(recorded) else 'nothing'} in model_fn, "
                      f"{replayed[where] if where < len(replayed) else 'nothing'} replayed)")
    later = next((call for call in pending.calls[pending.cursor + len(replayed):]
                  if tensors.find(call[1]) is not None), None)
    if later is not None:
        return None, (f"model_fn changes {tensors.label(later[1])!r} ({later[0]}) after its modules' "
                      f"reset_parameters() initialised it")
    written = {target for name, target in replayed if name.endswith("_") or name == "data="}
    missing = [name for name in sorted(set(names.values())) if name not in written]
    if missing:
        return None, f"reset_parameters() does not set {missing[0]!r}"
    return replayed, ""


class Prepared:
    """How `materialize` will initialise one model: its place in `model_fn`'s result and replay (or why not)."""

    def __init__(self, pending: _Pending, index: int, plan: Optional[List[Tuple[str, str]]], why: str) -> None:
        self.pending, self.index, self.plan, self.why = pending, index, plan, why
        self.calls: Optional[List[_Call]] = None  # model_fn's own calls to replay, when plan is None


def prepare(model: torch.nn.Module, model_name: str) -> Prepared:
    """Decide, on the meta model before it is sharded, how to initialise its slices so that they repeat `model_fn`
    (see the module docstring): its modules' `reset_parameters()`, else `model_fn`'s own recorded calls, else rank 0
    builds it whole."""
    pending = _pending
    if pending is None:
        raise RuntimeError(f"Sharded torch model {model_name!r} is on the meta device, but fe did not build it")
    index = pending.index
    pending.index += 1
    if pending.reason:
        return Prepared(pending, index, None, pending.reason)
    unseen = _unseen(model, pending)
    if unseen:
        pending.reason = unseen
        return Prepared(pending, index, None, unseen)
    plan, why = _replay_plan(model, pending)
    if plan is not None:
        pending.cursor += len(plan)
        return Prepared(pending, index, plan, "")
    calls, why_not = _call_plan(model, pending)
    if calls is not None:
        pending.cursor += len(calls)
        prepared = Prepared(pending, index, None, "")
        prepared.calls = calls
        return prepared
    pending.reason = f"{why}; {why_not}" if why_not else why
    return Prepared(pending, index, None, pending.reason)


# Calls that set every element of their tensor without reading it: what came before only drew random numbers
_OVERWRITES = frozenset({
    "uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
    "trunc_normal_", "orthogonal_", "sparse_", "random_", "exponential_", "geometric_", "log_normal_", "cauchy_",
    "zero_", "zeros_", "ones_", "fill_", "constant_", "eye_", "dirac_"})


class _Call:
    """One recorded initialisation call of a model's tensor: replayed on a whole CPU copy (or a scratch tensor)."""

    def __init__(self, name: str, target: torch.Tensor, path: str, func: Any, args: tuple, kwargs: dict) -> None:
        self.name, self.target, self.path, self.func, self.args, self.kwargs = name, target, path, func, args, kwargs

    def run(self, tensor: torch.Tensor) -> None:
        args = tuple(tensor if arg is self.target else arg for arg in self.args)
        kwargs = {key: tensor if value is self.target else value for key, value in self.kwargs.items()}
        self.func(*args, **kwargs)


def _call_plan(model: torch.nn.Module, pending: _Pending) -> Tuple[Optional[List[_Call]], str]:
    """`model_fn`'s own calls that initialised `model` (a contiguous run of in-place calls on its tensors, with no
    other tensor as input, each tensor set whole by one of them), to replay as they ran; else (None, why not)."""
    tensors = _Tensors(model)
    names = tensors.names
    block: List[_Call] = []
    index = pending.cursor
    while index < len(pending.calls) and tensors.find(pending.calls[index][1]) is not None:
        (name, target), (func, args, kwargs) = pending.calls[index], pending.replayable[index]
        path, whole = tensors.find(target)  # type: ignore[misc]
        if not whole:
            return None, f"model_fn writes part of {path!r} through a view ({name})"
        if name == "data=" or any(isinstance(value, torch.Tensor) and value is not target
                                  for value in (*args, *kwargs.values())):
            return None, f"model_fn sets {path!r} from another tensor ({name})"
        block.append(_Call(name, target, path, func, args, kwargs))
        index += 1
    stray = next((call for call in pending.calls[index:] if tensors.find(call[1]) is not None), None)
    if stray is not None or not block:
        return None, (f"model_fn's calls on {tensors.label(stray[1])!r} ({stray[0]}) are not one run of "
                      f"initialisations" if stray is not None else "model_fn made no initialisation calls")
    covered = {call.path for call in block if call.name in _OVERWRITES}
    missing = [name for name in sorted(set(names.values())) if name not in covered]
    if missing:
        return None, f"model_fn never sets {missing[0]!r} in place"
    return block, ""


def _replay_calls(model: torch.nn.Module, calls: List[_Call]) -> None:
    """Replay `model_fn`'s recorded calls in their order, drawing the same random numbers: calls before a tensor's
    last whole overwrite run on a scratch tensor of its shape (only their random draws matter); from there on on a
    whole CPU copy, whose rows each process keeps after the tensor's last call. One or two tensors whole at a time."""
    tensors = dict(model.named_parameters(remove_duplicate=False))
    tensors.update(model.named_buffers(remove_duplicate=False))
    start: Dict[str, int] = {}
    last: Dict[str, int] = {}
    for position, call in enumerate(calls):
        if call.name in _OVERWRITES:
            start[call.path] = position
        last[call.path] = position
    live: Dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for position, call in enumerate(calls):
            shape, dtype = call.target.shape, call.target.dtype
            if position < start[call.path]:
                call.run(torch.empty(shape, dtype=dtype))
                continue
            tensor = live.setdefault(call.path, torch.empty(shape, dtype=dtype))
            call.run(tensor)
            if position == last[call.path]:
                _copy_into(tensors[call.path], live.pop(call.path))


def materialize(model: torch.nn.Module, device: torch.device, model_name: str, prepared: Prepared) -> None:
    """Give a sharded model built on the meta device its memory (this process's slices and the buffers) on `device`,
    and initialise it as `model_fn()` in one process would have (see the module docstring)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    model.to_empty(device=device)
    if prepared.plan is not None:
        _replay(model)
        return
    if prepared.calls is not None:
        _replay_calls(model, prepared.calls)
        return
    pending = prepared.pending
    if dist.get_rank() == 0:
        warnings.warn(f"Sharded torch model {model_name!r}: {prepared.why}, so rank 0 builds it whole on its CPU "
                      f"(once) and sends each process its slices; initialise weights in place (reset_parameters() "
                      f"or torch.nn.init on the model's own tensors) to build it without it existing whole",
                      stacklevel=2)
    equal = _same_random_state(pending.rng)
    whole = None
    if dist.get_rank() == 0:
        if pending.whole is None:
            torch.set_rng_state(pending.rng)
            built = pending.model_fn()
            pending.whole = list(built) if isinstance(built, (list, tuple)) else [built]
            pending.rng = torch.get_rng_state()
        whole = pending.whole[prepared.index]
    broadcast_module_state(model, whole)
    if equal:  # every process continues as rank 0 (which ran model_fn), as in the replay
        state = _broadcast_host(pending.rng.clone())
        torch.set_rng_state(state)
        pending.rng = state
    if pending.whole is not None:
        pending.whole[prepared.index] = None  # type: ignore[call-overload]


def _same_random_state(state: torch.Tensor) -> bool:
    """Whether every process started model_fn from rank 0's random state (a seeded run)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    first = _broadcast_host(state.clone())
    device = _collective_device(state)
    same = torch.tensor([int(torch.equal(first, state))], dtype=torch.int64, device=device)
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    return bool(same.item())


def _broadcast_host(tensor: torch.Tensor) -> torch.Tensor:
    """Rank 0's value of a CPU tensor on every process (through the accelerator on NCCL)."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    moved = tensor.to(_collective_device(tensor))
    dist.broadcast(moved, src=0)
    return moved.cpu()


def _copy_into(target: torch.Tensor, whole: torch.Tensor) -> None:
    """Copy `whole` (on the CPU) into `target`: this process's rows of a sharded parameter, or a whole buffer."""
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    with torch.no_grad():
        if isinstance(target, DTensor):
            local = target.to_local()
            piece = whole.tensor_split(_boundaries(whole.shape[0], target), dim=0)[target.device_mesh.get_local_rank()]
            local.copy_(piece.to(local.device))
        else:
            target.copy_(whole.to(target.device))


def _boundaries(rows: int, target: Any) -> List[int]:
    """Row boundaries of FSDP2's layout (`torch.chunk`: equal chunks of ceil(rows / N), the last ones shorter or
    empty)."""
    world = target.device_mesh.size()
    size = -(-rows // world)
    return [min(rows, size * index) for index in range(1, world)]


def _replay(model: torch.nn.Module) -> None:
    """Each module's `reset_parameters()` on whole CPU copies of its own weights, one module at a time; each process
    keeps its rows. A parameter shared by several modules keeps its first module's values (as a model that ties
    weights after building its modules does)."""
    done = set()
    for module in model.modules():
        params, buffers = _own(module)
        if not params and not buffers:
            continue
        temporary: Dict[str, torch.Tensor] = {}
        for name, param in params:
            temporary[name] = torch.nn.Parameter(torch.empty(param.shape, dtype=param.dtype),
                                                 requires_grad=param.requires_grad)
            module._parameters[name] = temporary[name]  # pylint: disable=protected-access
        for name, buffer in buffers:
            temporary[name] = torch.empty(buffer.shape, dtype=buffer.dtype)
            module._buffers[name] = temporary[name]  # pylint: disable=protected-access
        try:
            with torch.no_grad():
                module.reset_parameters()
        finally:
            for name, param in params:
                module._parameters[name] = param  # pylint: disable=protected-access
            for name, buffer in buffers:
                module._buffers[name] = buffer  # pylint: disable=protected-access
        for name, tensor in params + buffers:
            if id(tensor) not in done:
                done.add(id(tensor))
                _copy_into(tensor, temporary[name].detach())
        temporary.clear()


def broadcast_module_state(model: torch.nn.Module, whole: Optional[torch.nn.Module]) -> None:
    """Rank 0's weights and buffers (`whole`, None on the other ranks) into every process's `model` (sharded
    parameters receive their rows), one tensor at a time."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    source = None if whole is None else dict(whole.named_parameters(remove_duplicate=False))
    if whole is not None:
        source.update(whole.named_buffers(remove_duplicate=False))
    seen = set()
    targets = list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False))
    for name, target in targets:
        if id(target) in seen:
            continue
        seen.add(id(target))
        device = _collective_device(target)
        if source is not None:
            tensor = source[name].detach().to(device=device, dtype=target.dtype).contiguous()
        else:
            tensor = torch.empty(target.shape, dtype=target.dtype, device=device)
        dist.broadcast(tensor, src=0)
        if isinstance(target, DTensor):
            _copy_into(target, tensor)
        else:
            with torch.no_grad():
                target.copy_(tensor)
        del tensor


def _collective_device(target: torch.Tensor) -> torch.device:
    """Where a broadcast's tensor lives: the process's accelerator on NCCL, the CPU on gloo."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    backend = str(dist.get_backend()).lower()
    if "nccl" in backend and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
