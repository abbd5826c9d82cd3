"""Sharding (FSDP2) in one process, without launching anything: how it is asked for, the errors before training,
which submodules become units, the policies handed to FSDP2, and the safety of reading a distributed checkpoint.
The 2-process behaviour is in test_fsdp.py."""
from __future__ import annotations

import json
import os
import pickle

import pytest
import torch

from torch_helpers import HAS_FSDP2, NO_FSDP2

if not HAS_FSDP2:
    pytest.skip(NO_FSDP2, allow_module_level=True)

import torch.distributed.checkpoint as dcp  # noqa: E402
from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy  # noqa: E402

from fe_core.build import build
from fe_core.config_error import ConfigurationError
from fe_torch import sharded_checkpoint
from fe_torch.sharding import FSDP, resolve_sharding, shard_model


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),  # 112 parameters
                               torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)),  # 272 + 68
                               torch.nn.Linear(4, 2))  # 10


def test_sharding_in_one_process_is_one_line_naming_the_launcher():
    with pytest.raises(ConfigurationError) as caught:
        build(model_fn=mlp, optimizer_fn="adam", sharding="fsdp", model_name="big")
    message = str(caught.value)
    assert "'big'" in message and "torchrun --nproc_per_node" in message and "\n" not in message


@pytest.mark.parametrize("value", ["zero3", 3, {"fsdp": True}])
def test_an_unknown_sharding_is_refused(value):
    with pytest.raises(ConfigurationError, match="must be 'fsdp' or fe.distributed.FSDP"):
        build(model_fn=mlp, optimizer_fn="adam", sharding=value)


def test_one_sharding_per_model():
    with pytest.raises(ConfigurationError, match="one sharding per model"):
        build(model_fn=lambda: [mlp(), mlp()], optimizer_fn=["adam", "adam"], sharding=["fsdp"])


def test_without_sharding_build_is_unchanged():
    model = build(model_fn=mlp, optimizer_fn="adam", sharding=None)
    assert "fe_sharding" not in model.__dict__ and isinstance(next(model.parameters()), torch.nn.Parameter)


@pytest.mark.parametrize("kwargs", [{"min_params": 0}, {"min_params": True}, {"policy": "Linear"},
                                    {"policy": [int]}])
def test_fsdp_options_are_checked(kwargs):
    with pytest.raises(ValueError):
        FSDP(**kwargs)


def test_default_units_are_submodules_above_the_size_threshold_bottom_up():
    model = mlp()
    units = FSDP(min_params=100).units(model)
    # Linear(6,16)=112 and Linear(16,16)=272 are units; Linear(16,4)=68 is not, nor is its parent (68 left over)
    assert units == [model[0], model[2][0]]
    assert FSDP(min_params=300).units(model) == [model[2]]  # 272 + 68 = 340 in the inner Sequential
    assert FSDP().units(model) == []  # the default threshold (1M): the root alone


def test_a_policy_replaces_the_size_rule():
    model = mlp()
    assert FSDP(policy=[torch.nn.Sequential]).units(model) == [model[2]]  # the root is never listed
    assert FSDP(policy=lambda module: isinstance(module, torch.nn.Linear) and module.out_features == 16
                ).units(model) == [model[0], model[2][0]]


def test_cpu_offload_of_a_model_computing_on_the_cpu_is_one_line():
    with pytest.raises(ConfigurationError) as caught:
        shard_model(mlp(), FSDP(cpu_offload=True), "big", world_size=2)
    assert "computes on the CPU" in str(caught.value) and "\n" not in str(caught.value)


def test_a_compiled_model_is_refused_in_one_line():
    with pytest.raises(ConfigurationError) as caught:
        shard_model(torch.compile(mlp()), FSDP(), "big", world_size=2)
    assert "torch.compile'd model" in str(caught.value) and "\n" not in str(caught.value)


def test_mixed_precision_and_cpu_offload_map_to_fsdp2_policies():
    kwargs = FSDP(mixed_precision=True, cpu_offload=True).shard_kwargs()
    assert kwargs["mp_policy"] == MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    assert isinstance(kwargs["offload_policy"], CPUOffloadPolicy)
    given = MixedPrecisionPolicy(param_dtype=torch.float16)
    assert FSDP(mixed_precision=given).shard_kwargs()["mp_policy"] is given
    assert FSDP().shard_kwargs() == {"reshard_after_forward": True}
    assert isinstance(resolve_sharding("FSDP", "m"), FSDP)


def _checkpoint_of(tmp_path, state):
    """A distributed checkpoint folder for a model named 'm', as fe writes it (one process)."""
    path = tmp_path / "m.dcp"
    dcp.save(state, storage_writer=dcp.FileSystemWriter(str(path)))
    (path / sharded_checkpoint.META_FILE).write_text(json.dumps(
        {"format": "fe_torch.sharded", "version": 1, "world_size": 2, "optimizers": [], "current": -1,
         "scalers": [], "accumulation": []}))
    return path


def _model():
    model = torch.nn.Linear(2, 1)
    model.model_name = "m"
    return model


def test_a_distributed_checkpoint_loads_into_an_unsharded_model(tmp_path):
    source = torch.nn.Linear(2, 1)
    _checkpoint_of(tmp_path, {f"model.{key}": value for key, value in source.state_dict().items()})
    model = _model()
    assert sharded_checkpoint.load_checkpoint_files(model, str(tmp_path), load_optimizer=False)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), source.state_dict().values()))


def test_metadata_naming_other_code_is_refused_without_running_it(tmp_path):
    path = _checkpoint_of(tmp_path, {f"model.{key}": value for key, value in _model().state_dict().items()})
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    (path / ".metadata").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ValueError, match="cannot be read safely.*posix.system|cannot be read safely.*os.system"):
        sharded_checkpoint.load_checkpoint_files(_model(), str(tmp_path), load_optimizer=False)
    assert not marker.exists()


def test_a_non_tensor_entry_is_never_unpickled(tmp_path):
    # DCP stores non-tensors as pickled bytes it would read with torch.load(weights_only=False): fe refuses them
    _checkpoint_of(tmp_path, {"model.weight": {"not": "a tensor"}, "model.bias": torch.zeros(1)})
    with pytest.raises(ValueError, match="has no tensor 'model.weight'"):
        sharded_checkpoint.load_checkpoint_files(_model(), str(tmp_path), load_optimizer=False)


@pytest.mark.parametrize("where", ["absolute", "parent"])
def test_metadata_placing_a_slice_outside_its_folder_is_refused(tmp_path, where):
    # `.metadata` names the file of every slice: a crafted one must not make fe read another file (here another
    # run's weights, which would load silently) - a checkpoint never decides a path
    other = torch.nn.Linear(2, 1)
    outside = tmp_path / "other"
    outside.mkdir()
    dcp.save({f"model.{key}": value for key, value in other.state_dict().items()},
             storage_writer=dcp.FileSystemWriter(str(outside / "m.dcp")))
    victim = tmp_path / "run"
    victim.mkdir()
    path = _checkpoint_of(victim, {f"model.{key}": value for key, value in _model().state_dict().items()})
    metadata = pickle.loads((path / ".metadata").read_bytes())
    stolen = outside / "m.dcp" / "__0_0.distcp"
    for info in metadata.storage_data.values():
        info.relative_path = str(stolen) if where == "absolute" else os.path.join("..", "..", "other", "m.dcp",
                                                                                  "__0_0.distcp")
    (path / ".metadata").write_bytes(pickle.dumps(metadata))
    model = _model()
    with pytest.raises(ValueError, match="cannot be read safely.*outside its own folder"):
        sharded_checkpoint.load_checkpoint_files(model, str(victim), load_optimizer=False)
    assert not torch.equal(model.weight, other.weight)


# One process and N processes with the same seed see the same global batches (the shuffled order included): the
# Pipeline's check is tests/core/test_pipeline_layers_data_parallel.py (ranks simulated one after another; threads
# share numpy's global state, so which rank draws the epoch's number first would be a race).
