"""FSDP options and sharded building in one process, without launching anything: the torch version gate, units
(never containers), tied parameters across units, the process group's backend for CPU offload, activation
checkpointing, and the meta-device build's decision to replay module initialisation (and its result). The 2-process
behaviour of all of these is in test_fsdp_matrix.py."""
from __future__ import annotations

import pytest
import torch
from torch.nn.init import orthogonal_ as imported_orthogonal

from fe_core.build import build
from fe_core.config_error import ConfigurationError
from fe_torch import sharded_build
from fe_torch.distributed import group_backend
from fe_torch.sharding import FSDP, check_tied_parameters, checkpoint_activations


class Block(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.inner = torch.nn.Linear(width, width)
        self.outer = torch.nn.Linear(width, width)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x + self.outer(torch.tanh(self.inner(x)))


class Stack(torch.nn.Module):
    """Blocks in a ModuleList (a container that is never called) and a dict of heads."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(8, 2)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.heads["a"](x)


def test_sharding_on_an_old_torch_is_one_line_naming_the_version(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.5.1+cpu")
    with pytest.raises(ConfigurationError) as caught:
        build(model_fn=lambda: torch.nn.Linear(2, 2), optimizer_fn="adam", sharding="fsdp", model_name="old")
    message = str(caught.value)
    assert "torch >= 2.6" in message and "2.5.1" in message and "'old'" in message and "\n" not in message


def test_containers_never_become_units():
    model = Stack()
    # the size rule: the ModuleList's 288 parameters go up to the root, not into a unit of their own
    assert FSDP(min_params=200).units(model) == []
    assert FSDP(min_params=100).units(model) == [model.blocks[0], model.blocks[1]]
    assert FSDP(policy=[torch.nn.ModuleList, torch.nn.ModuleDict, Block]).units(model) == list(model.blocks)
    everything = FSDP(policy=lambda module: True).units(model)
    assert model.blocks not in everything and model.heads not in everything and model.heads["a"] in everything


def tied() -> torch.nn.Module:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
    model[2].weight = model[0].weight
    return model


def test_parameters_tied_across_units_are_refused_in_one_line():
    model = tied()
    with pytest.raises(ConfigurationError) as caught:
        check_tied_parameters(model, FSDP(min_params=1).units(model) + [model], "tied")
    message = str(caught.value)
    assert "'0.weight' is tied to '2.weight'" in message and "different FSDP units" in message
    assert "\n" not in message
    check_tied_parameters(model, [model], "tied")  # both in the root unit: allowed


def test_cpu_offload_on_gpus_gets_gloo_beside_nccl():
    assert group_backend(use_cuda=False) == "gloo"
    assert group_backend(use_cuda=False, cpu_offload=True) == "gloo"
    assert group_backend(use_cuda=True) == "nccl"
    assert group_backend(use_cuda=True, cpu_offload=True) == "cpu:gloo,cuda:nccl"


def test_activation_checkpointing_recomputes_and_changes_nothing():
    assert "activation_checkpointing=['Block']" in repr(FSDP(activation_checkpointing=[Block]))
    with pytest.raises(TypeError):
        FSDP(activation_checkpointing=["Block"])
    torch.manual_seed(0)
    plain = torch.nn.Sequential(Block(), Block())
    checkpointed = torch.nn.Sequential(Block(), Block())
    checkpointed.load_state_dict(plain.state_dict())
    checkpoint_activations(checkpointed, [Block])
    x = torch.randn(5, 8)
    plain(x).square().sum().backward()
    checkpointed(x).square().sum().backward()
    for a, b in zip(plain.parameters(), checkpointed.parameters()):
        assert torch.equal(a.grad, b.grad)
    assert [block.calls for block in checkpointed] == [2, 2]  # forward, then recomputed in backward
    assert [block.calls for block in plain] == [1, 1]
    assert list(checkpointed.state_dict()) == list(plain.state_dict())  # no wrapper in the weights' names


def meta_build(model_fn):
    with sharded_build.scope(model_fn):
        model = model_fn()
    return model


def with_norm() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), Block(), torch.nn.Embedding(5, 8))


def test_a_replayed_initialisation_equals_model_fn_bit_for_bit():
    torch.manual_seed(3)
    expected = with_norm()
    after = torch.randn(3)
    torch.manual_seed(3)
    model = meta_build(with_norm)
    assert all(tensor.is_meta for tensor in model.state_dict().values())
    prepared = sharded_build.prepare(model, "m")
    assert prepared.plan is not None, prepared.why
    model.to_empty(device=torch.device("cpu"))
    sharded_build._replay(model)  # pylint: disable=protected-access  (what each process runs on its slices)
    for (name, value), (_, target) in zip(model.state_dict().items(), expected.state_dict().items()):
        assert torch.equal(value, target), name
    assert torch.equal(torch.randn(3), after)  # the random stream continues as after model_fn in one process


class Scaled(torch.nn.Module):
    """Own weights without reset_parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))


class Table(torch.nn.Linear):
    """A buffer that reset_parameters does not set."""

    def __init__(self) -> None:
        super().__init__(3, 3)
        self.register_buffer("positions", torch.arange(3.0))


def init_after(model: torch.nn.Module) -> torch.nn.Module:
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            torch.nn.init.xavier_normal_(module.weight)
            torch.nn.init.zeros_(module.bias)
    return model


def custom() -> torch.nn.Module:
    return init_after(with_norm())


def test_initialisation_after_construction_replays_model_fn_s_own_calls():
    torch.manual_seed(5)
    expected = custom()
    after = torch.randn(3)
    torch.manual_seed(5)
    model = meta_build(custom)
    prepared = sharded_build.prepare(model, "m")
    assert prepared.plan is None and prepared.calls is not None, prepared.why  # not reset_parameters(): its calls
    model.to_empty(device=torch.device("cpu"))
    sharded_build._replay_calls(model, prepared.calls)  # pylint: disable=protected-access
    for (name, value), (_, target) in zip(model.state_dict().items(), expected.state_dict().items()):
        assert torch.equal(value, target), name
    assert torch.equal(torch.randn(3), after)


def copied() -> torch.nn.Module:
    model = torch.nn.Sequential(torch.nn.Linear(3, 3))
    with torch.no_grad():
        model[0].weight.copy_(torch.linspace(0, 1, 9).reshape(3, 3))
    return model


@pytest.mark.parametrize("model_fn, why", [
    (lambda: torch.nn.Sequential(Scaled()), "Scaled has weights of its own and no reset_parameters()"),
    (lambda: torch.nn.Sequential(Scaled()), "model_fn made no initialisation calls"),
    (lambda: torch.nn.Sequential(Table()), "does not set '0.positions'"),
    (tied, "initialised it differently"),
    (copied, "sets '0.weight' from another tensor (copy_)"),
])
def test_models_that_cannot_be_replayed_are_built_whole_on_rank_0(model_fn, why):
    prepared = sharded_build.prepare(meta_build(model_fn), "m")
    assert prepared.plan is None and prepared.calls is None and why in prepared.why


@pytest.mark.parametrize("name", ["LeNet", "WideResidualNetwork"])
def test_fe_architectures_are_built_sharded_without_existing_whole(name):
    from fe_torch.architecture.lenet import LeNet  # pylint: disable=import-outside-toplevel
    from fe_torch.architecture.wideresnet import WideResidualNetwork  # pylint: disable=import-outside-toplevel
    model_fn = {"LeNet": LeNet, "WideResidualNetwork": WideResidualNetwork}[name]
    torch.manual_seed(1)
    expected = model_fn().state_dict()
    torch.manual_seed(1)
    model = meta_build(model_fn)
    prepared = sharded_build.prepare(model, name)
    assert prepared.plan is not None or prepared.calls is not None, prepared.why
    model.to_empty(device=torch.device("cpu"))
    if prepared.plan is not None:
        sharded_build._replay(model)  # pylint: disable=protected-access
    else:
        sharded_build._replay_calls(model, prepared.calls)  # pylint: disable=protected-access
    for (key, value), target in zip(model.state_dict().items(), expected.values()):
        assert torch.equal(value, target), key


def dcgan_init() -> torch.nn.Module:
    """DCGAN's and Hugging Face's idiom: initialise through `.data` (another tensor object on the same memory)."""
    def init(module: torch.nn.Module) -> None:
        if isinstance(module, torch.nn.Linear):
            module.weight.data.normal_(0.0, 0.02)
            module.bias.data.zero_()
        elif isinstance(module, torch.nn.BatchNorm1d):
            module.weight.data.normal_(1.0, 0.02)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)).apply(init)


def row_init() -> torch.nn.Module:
    """Part of a weight set through a view after construction."""
    model = torch.nn.Linear(4, 4)
    with torch.no_grad():
        model.weight[0].fill_(1.0)
        model.weight.data[1:3].zero_()
    return model


def recurrent_init() -> torch.nn.Module:
    """orthogonal_, trunc_normal_ and eye_ do nothing on the meta device (or write through out=)."""
    model = torch.nn.Sequential(torch.nn.LSTM(4, 5), torch.nn.Linear(5, 5), torch.nn.Linear(5, 5))
    torch.nn.init.orthogonal_(model[0].weight_hh_l0)
    torch.nn.init.trunc_normal_(model[1].weight, std=0.02)
    torch.nn.init.eye_(model[2].weight)
    return model


def imported_init() -> torch.nn.Module:
    """An initialisation that does nothing on the meta device, imported by name (out of fe's sight)."""
    model = torch.nn.Linear(4, 4)
    imported_orthogonal(model.weight)
    return model


@pytest.mark.parametrize("model_fn, replayed", [
    (dcgan_init, True), (row_init, False), (recurrent_init, True), (imported_init, False)])
def test_the_sharded_build_equals_model_fn_or_falls_back_to_rank_0(model_fn, replayed):
    """Initialisations written through `.data` or a view, or by functions that are no-ops on the meta device, are
    either replayed bit for bit or built by rank 0, never replayed wrong (before: reset_parameters() replayed, the
    writes lost)."""
    torch.manual_seed(9)
    expected = model_fn().state_dict()
    torch.manual_seed(9)
    model = meta_build(model_fn)
    prepared = sharded_build.prepare(model, "m")
    assert (prepared.plan is not None or prepared.calls is not None) == replayed, prepared.why
    if not replayed:
        return  # rank 0 runs model_fn whole: its weights are model_fn's by construction
    model.to_empty(device=torch.device("cpu"))
    if prepared.plan is not None:
        sharded_build._replay(model)  # pylint: disable=protected-access
    else:
        sharded_build._replay_calls(model, prepared.calls)  # pylint: disable=protected-access
    for key, value in model.state_dict().items():
        assert torch.equal(value, expected[key]), key


class Slot(torch.nn.Module):
    """Own weights that its parent initialises."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(4, 4))

    def reset_parameters(self) -> None:
        """Its parent sets it."""


class Gated(torch.nn.Module):
    """A module whose reset_parameters() also initialises its child's weight: replaying it module by module would
    draw into the child's slice on each process (not model_fn's values) instead of a whole CPU copy."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = Slot()
        self.gate = torch.nn.Parameter(torch.empty(4))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.zeros_(self.gate)
        torch.nn.init.normal_(self.proj.weight, std=0.02)


def test_reset_parameters_that_set_another_module_s_weights_are_not_replayed():
    torch.manual_seed(4)
    expected = Gated().state_dict()
    torch.manual_seed(4)
    model = meta_build(Gated)
    prepared = sharded_build.prepare(model, "m")
    assert prepared.plan is None  # model_fn's own calls instead: each on a whole copy of its tensor
    assert "Gated.reset_parameters() sets 'proj.weight', which is not its own" in \
        sharded_build._replay_plan(model, prepared.pending)[1]  # pylint: disable=protected-access
    model.to_empty(device=torch.device("cpu"))
    sharded_build._replay_calls(model, prepared.calls)  # pylint: disable=protected-access
    for key, value in model.state_dict().items():
        assert torch.equal(value, expected[key]), key


def test_a_sharded_model_s_float16_loss_scaler_agrees_across_processes():
    """Each process holds different gradient slices: the scaler must all-reduce its inf/NaN check (FSDP's
    ShardedGradScaler), or one process skips a step the others take and the scales drift apart."""
    import warnings  # pylint: disable=import-outside-toplevel
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler  # pylint: disable=import-outside-toplevel
    from fe_torch.optimizers import build_optimizer  # pylint: disable=import-outside-toplevel
    sharded, plain = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    sharded.fe_sharding = FSDP()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available" on a CPU-only machine: the scaler's type is checked
        scalers = [build_optimizer("adam", model, "m", True, torch.device("cuda")).scaler for model in (sharded, plain)]
    assert isinstance(scalers[0], ShardedGradScaler)
    assert not isinstance(scalers[1], ShardedGradScaler)  # DDP's gradients are already equal on every process


class Scaled2(torch.nn.Module):
    """Initialised in __init__ with one std, reset_parameters() with another (the same calls, other arguments)."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(4, 4))
        torch.nn.init.normal_(self.weight, std=0.02)

    def reset_parameters(self) -> None:
        torch.nn.init.normal_(self.weight, std=1.0)


def test_reset_parameters_with_other_arguments_than_model_fn_s_are_not_replayed():
    torch.manual_seed(2)
    expected = Scaled2().weight.detach().clone()
    torch.manual_seed(2)
    model = meta_build(Scaled2)
    plan, why = sharded_build._replay_plan(model, sharded_build._pending)  # pylint: disable=protected-access
    assert plan is None and "with other arguments" in why
    prepared = sharded_build.prepare(model, "m")  # model_fn's own calls instead
    model.to_empty(device=torch.device("cpu"))
    sharded_build._replay_calls(model, prepared.calls)  # pylint: disable=protected-access
    assert torch.equal(model.weight, expected)
