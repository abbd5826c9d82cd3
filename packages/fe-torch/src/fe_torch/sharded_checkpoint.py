"""Checkpoints of sharded (FSDP2) models with torch's distributed checkpoint, inside fe's checkpoint directory.

In a checkpoint (RestoreWizard / `System.save_state`), a sharded model's weights, optimizer state(s) and pending
gradient accumulation are one distributed checkpoint in the folder `<name>.dcp/`:

    <name>.dcp/.metadata          DCP's index of the tensors (which process wrote which slice, where)
    <name>.dcp/__<rank>_0.distcp  each process's slices, written by that process (no process gathers the model)
    <name>.dcp/fe_sharded.json    everything that is not a tensor: optimizer hyper-parameters, the current optimizer,
                                  GradScaler state, accumulation counts, the number of processes that wrote it

How it fits fe's checkpoint format: `System.save_state` first lets every process write its slices into a staging
folder beside the checkpoint (`stage_models`, a collective), then rank 0 moves each model's folder into the
checkpoint's temporary directory (`save_checkpoint_files`) where, like every file, it is hashed into the manifest
and swapped in atomically. Loading verifies the manifest first (fe_core), then every process reads the slices it
needs: DCP reshards, so a checkpoint written by 2 processes loads into 1 (an unsharded model) or 4, and a 1-process
checkpoint (`<name>.pt` / `<name>_opt.pt`) loads into a sharded model.

Safety: loading never runs code from the checkpoint. DCP's own reader unpickles `.metadata` with `pickle.load` and
reads non-tensor entries with `torch.load(weights_only=False)`; fe stores no non-tensor entries in DCP (they are in
`fe_sharded.json`), reads `.metadata` through an unpickler that admits only DCP's metadata classes, torch.Size and
dtypes, refuses any entry the metadata marks as non-tensor, and reads the tensors with `torch.load(weights_only=True)`
(DCP's tensor path).
"""
from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import warnings
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist
from fe_core.checkpoint.hashed_file import write_hashed_file

from fe_torch.checkpoint import _accumulation_states, _restore_current_optimizer  # the ordinary format's pieces
from fe_torch.devices import model_device
from fe_torch.optimizers import scheduled_optimizers
from fe_torch.precision import grad_scaler_of
from fe_torch.sharding import is_sharded

__all__ = ["dcp_dir_name", "stage_models", "save_checkpoint_files", "load_checkpoint_files", "full_state_dict",
           "load_full_state_dict", "load_full_weights", "load_full_checkpoint", "META_FILE", "STAGING_NAME"]

META_FILE = "fe_sharded.json"
STAGING_NAME = ".fe-shards-staging"
_FORMAT = "fe_torch.sharded"
_LOCAL_FORMAT = "fe_torch.local_shards"
_VERSION = 1


def dcp_dir_name(model_name: str) -> str:
    """The folder of a sharded model's distributed checkpoint: `<name>.dcp`."""
    return f"{model_name}.dcp"


def _rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def _world() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _trainable(model: torch.nn.Module) -> List[torch.nn.Parameter]:
    return [parameter for parameter in model.parameters() if parameter.requires_grad]


# ------------------------------------------------------------------------------------------------ JSON of plain values
def _to_json(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"__tuple__": [_to_json(item) for item in value]}
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError(f"cannot store a dict with non-string keys in {META_FILE}")
        return {key: _to_json(item) for key, item in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.ndim:
        return {"__tensor__": value.item(), "dtype": str(value.dtype).replace("torch.", "")}
    raise TypeError(f"cannot store a {type(value).__name__} in {META_FILE}")


_SCALAR_DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "int32": torch.int32,
                  "bfloat16": torch.bfloat16, "float16": torch.float16}


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(_from_json(item) for item in value["__tuple__"])
        if set(value) == {"__tensor__", "dtype"}:
            dtype = _SCALAR_DTYPES.get(value["dtype"])
            if dtype is None:
                raise ValueError(f"{META_FILE} names the dtype {value['dtype']!r:.40}")
            return torch.tensor(value["__tensor__"], dtype=dtype)
        return {key: _from_json(item) for key, item in value.items()}
    return value


# ------------------------------------------------------------------------------------------------ the state
def _split_optimizer_state(osd: Dict[str, Any], index: int) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
    """An optimizer state dict (FQN keys) as tensors for DCP (`optimizer<i>.<fqn>.<key>`) and plain values."""
    tensors: Dict[str, torch.Tensor] = {}
    plain: Dict[str, Any] = {}
    for fqn, entries in osd["state"].items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor) and (value.ndim or _is_dtensor(value)):
                tensors[f"optimizer{index}.{fqn}.{key}"] = value
            else:
                plain.setdefault(fqn, {})[key] = value
    return tensors, {"state": plain, "tensor_keys": {fqn: sorted(key for key, value in entries.items()
                                                                 if f"optimizer{index}.{fqn}.{key}" in tensors)
                                                     for fqn, entries in osd["state"].items()},
                     "param_groups": osd["param_groups"]}


def _is_dtensor(value: Any) -> bool:
    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
    return isinstance(value, DTensor)


def _tensors_and_meta(model: torch.nn.Module) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        get_model_state_dict, get_optimizer_state_dict)
    tensors = {f"model.{key}": value for key, value in get_model_state_dict(model).items()}
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
    meta: Dict[str, Any] = {"format": _FORMAT, "version": _VERSION, "world_size": _world(), "optimizers": []}
    for index, optimizer in enumerate(optimizers):
        part, plain = _split_optimizer_state(get_optimizer_state_dict(model, optimizer), index)
        tensors.update(part)
        meta["optimizers"].append(plain)
    current = getattr(model, "current_optimizer", None)
    meta["current"] = next((index for index, optimizer in enumerate(optimizers) if optimizer is current), -1)
    meta["scalers"] = [_scaler_state(optimizer) for optimizer in optimizers]
    accumulation = []
    for position, state in enumerate(_accumulation_states(model)):
        grads = state.get("grads")
        present = [] if grads is None else [index for index, grad in enumerate(grads) if grad is not None]
        for index in present:
            tensors[f"accumulation{position}.{index}"] = grads[index]
        accumulation.append({"count": int(state.get("count", 0)), "grads": None if grads is None else present,
                             "length": None if grads is None else len(grads)})
    meta["accumulation"] = accumulation
    return tensors, meta


def _scaler_state(optimizer: torch.optim.Optimizer) -> Optional[Dict[str, Any]]:
    scaler = grad_scaler_of(optimizer)
    return scaler.state_dict() if scaler is not None else None


# ------------------------------------------------------------------------------------------------ saving
def _staging_root(save_dir: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(save_dir)), STAGING_NAME)


def stage_models(models: List[Any], save_dir: str) -> None:
    """Every process writes its slices of every sharded model into a staging folder beside `save_dir` (a collective:
    every process calls it, at the same point); rank 0 then moves them into the checkpoint (`save_checkpoint_files`).
    """
    sharded = [model for model in models if is_sharded(model)]
    if not sharded:
        return
    import torch.distributed.checkpoint as dcp  # pylint: disable=import-outside-toplevel
    staging = _staging_root(save_dir)
    if _rank() == 0:
        shutil.rmtree(staging, ignore_errors=True)  # left by a process killed while saving
        os.makedirs(staging)
    _barrier()
    for model in sharded:
        path = os.path.join(staging, dcp_dir_name(str(model.model_name)))
        tensors, meta = _tensors_and_meta(model)
        dcp.save(tensors, storage_writer=dcp.FileSystemWriter(path, sync_files=True))
        if _rank() == 0:
            text = json.dumps(_to_json(meta), allow_nan=False).encode("utf-8")
            write_hashed_file(os.path.join(path, META_FILE), lambda file: file.write(text))
        model.__dict__["fe_staged"] = path
    _barrier()


def save_checkpoint_files(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> List[str]:
    """A sharded model's files in a checkpoint being written into `save_dir` (rank 0): its staged distributed
    checkpoint moved in. Without a staged one (a backup that each process keeps for itself), this process's own
    slices in `<name>.shards-<rank>-of-<N>.pt`."""
    name = str(model.model_name)
    staged = model.__dict__.pop("fe_staged", None)
    os.makedirs(save_dir, exist_ok=True)
    # only the checkpoint being written beside the staging folder takes it (not, say, a backup after a failed save)
    if staged is not None and os.path.dirname(staged) == _staging_root(save_dir) and os.path.isdir(staged):
        target = os.path.join(save_dir, dcp_dir_name(name))
        os.replace(staged, target)
        try:
            os.rmdir(os.path.dirname(staged))  # the staging folder, once every model has been moved out of it
        except OSError:
            pass
        return sorted(os.path.join(dcp_dir_name(name), file) for file in os.listdir(target))
    return [_save_local(model, save_dir, save_optimizer)]


def _local_file(name: str) -> str:
    return f"{name}.shards-{_rank()}-of-{_world()}.pt"


def _localize(value: Any) -> Any:
    if _is_dtensor(value):
        return value.to_local().detach().clone()
    if isinstance(value, dict):
        return {key: _localize(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_localize(item) for item in value)
    return value


def _save_local(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> str:
    name = str(model.model_name)
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None)) if save_optimizer else []
    payload = {"format": _LOCAL_FORMAT, "model": _localize(dict(model.state_dict())),
               "optimizers": [_localize(optimizer.state_dict()) for optimizer in optimizers],
               "accumulation": [{"count": int(state.get("count", 0)), "grads": _localize(state.get("grads"))}
                                for state in _accumulation_states(model)]}
    file = _local_file(name)
    write_hashed_file(os.path.join(save_dir, file), lambda handle: torch.save(payload, handle))
    return file


# ------------------------------------------------------------------------------------------------ loading
_METADATA_CLASSES = ("Metadata", "MetadataIndex", "StorageMeta", "TensorProperties", "TensorStorageMetadata",
                     "ChunkStorageMetadata", "BytesStorageMetadata", "_MEM_FORMAT_ENCODING")


class _MetadataUnpickler(pickle.Unpickler):
    """Reads DCP's `.metadata` admitting only what DCP writes there: its metadata dataclasses, its storage records,
    torch.Size, dtypes and layouts (looked up in tables, never by an arbitrary name) and the path it was saved to."""

    _ALLOWED = {("torch.distributed.checkpoint.metadata", name) for name in _METADATA_CLASSES} | {
        ("torch.distributed.checkpoint.filesystem", "_StorageInfo"), ("torch", "Size"),
        ("torch.serialization", "_get_layout"), ("pathlib", "PosixPath"), ("pathlib", "PurePosixPath"),
        ("pathlib", "WindowsPath"), ("pathlib", "PureWindowsPath"), ("collections", "OrderedDict")}
    _DTYPES = {str(dtype).replace("torch.", ""): dtype for dtype in (
        torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128, torch.uint8,
        torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in self._DTYPES:
            return self._DTYPES[name]
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"its .metadata names {module}.{name:.60}, which is not one of the classes a "
                                     f"distributed checkpoint's index holds")


def _safe_reader(path: str) -> Any:
    import torch.distributed.checkpoint as dcp  # pylint: disable=import-outside-toplevel
    from torch.distributed.checkpoint.metadata import (  # pylint: disable=import-outside-toplevel
        Metadata, StorageMeta)

    class SafeReader(dcp.FileSystemReader):
        def read_metadata(self, *args: Any, **kwargs: Any) -> Metadata:
            metadata_path = os.path.join(path, ".metadata")
            with open(metadata_path, "rb") as file:
                try:
                    metadata = _MetadataUnpickler(io.BytesIO(file.read())).load()
                except Exception as error:  # pylint: disable=broad-except
                    raise ValueError(f"{metadata_path!r} cannot be read safely: {error}") from None
            if not isinstance(metadata, Metadata):
                raise ValueError(f"{metadata_path!r} does not hold DCP metadata")
            _check_storage_files(metadata, metadata_path)
            if getattr(metadata, "storage_meta", None) is None:
                metadata.storage_meta = StorageMeta()
            metadata.storage_meta.load_id = self.load_id
            if metadata.planner_data is None:
                metadata.planner_data = {}
            return metadata

    return SafeReader(path)


def _check_storage_files(metadata: Any, metadata_path: str) -> None:
    """Every slice is read from a file of the checkpoint's own folder: `.metadata` names each slice's file, and a
    crafted one could name any file the process can read (`/etc/...`, `../other-run/...`), so a name that is not a
    plain file name in the folder is refused before anything is read."""
    for index, info in (getattr(metadata, "storage_data", None) or {}).items():
        name = getattr(info, "relative_path", None)
        if not isinstance(name, str) or not name or name in (".", "..") or os.path.basename(name) != name or \
                "/" in name or "\\" in name or os.path.isabs(name):
            raise ValueError(f"{metadata_path!r} cannot be read safely: it places tensor "
                             f"{getattr(index, 'fqn', '?')!r:.80} in {name!r:.80}, outside its own folder")


def _safe_planner() -> Any:
    from torch.distributed.checkpoint import DefaultLoadPlanner  # pylint: disable=import-outside-toplevel

    class TensorsOnlyPlanner(DefaultLoadPlanner):
        def load_bytes(self, read_item: Any, value: Any) -> None:
            raise ValueError(f"the distributed checkpoint holds a non-tensor entry {read_item.dest_index.fqn!r}; fe "
                             f"reads only tensors from it (never torch.load of arbitrary objects)")

    return TensorsOnlyPlanner()


def _read_meta(path: str) -> Dict[str, Any]:
    meta_path = os.path.join(path, META_FILE)
    try:
        with open(meta_path, "r", encoding="utf-8") as file:
            meta = _from_json(json.load(file))
    except (OSError, ValueError) as error:
        raise ValueError(f"Cannot read {meta_path!r}: {error}") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
        raise ValueError(f"{meta_path!r} is not an fe_torch sharded checkpoint of version {_VERSION}")
    return meta


def _load_dcp(model: torch.nn.Module, path: str, load_optimizer: bool) -> None:
    import torch.distributed.checkpoint as dcp  # pylint: disable=import-outside-toplevel
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata  # pylint: disable=import-outside-toplevel
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        get_model_state_dict, get_optimizer_state_dict, set_model_state_dict, set_optimizer_state_dict)
    name = str(model.model_name)
    meta = _read_meta(path)
    reader = _safe_reader(path)
    stored = reader.read_metadata().state_dict_metadata
    wanted: Dict[str, torch.Tensor] = {f"model.{key}": value for key, value in get_model_state_dict(model).items()}
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None)) if load_optimizer else []
    if load_optimizer and len(optimizers) != len(meta["optimizers"]):
        raise ValueError(f"{path!r} holds {len(meta['optimizers'])} optimizer state(s), but torch model {name!r} has "
                         f"{len(optimizers)} optimizer(s)")
    templates = []
    for index, optimizer in enumerate(optimizers):
        template = get_optimizer_state_dict(model, optimizer)  # creates empty state (a step with lr 0) if none yet
        saved = meta["optimizers"][index]
        state: Dict[str, Dict[str, Any]] = {}
        for fqn, keys in saved["tensor_keys"].items():
            current = template["state"].get(fqn)
            if current is None or any(key not in current for key in keys):
                raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r} "
                                 f"(parameter {fqn!r})")
            state[fqn] = {key: current[key] for key in keys}
            for key in keys:
                wanted[f"optimizer{index}.{fqn}.{key}"] = current[key]
        for fqn, values in saved["state"].items():
            state.setdefault(fqn, {}).update(values)
        templates.append({"state": state, "param_groups": saved["param_groups"]})
    params = _trainable(model)
    accumulation = meta.get("accumulation") or []
    states = _accumulation_states(model)
    use_accumulation = load_optimizer and len(accumulation) == len(states)
    if use_accumulation:
        for position, saved in enumerate(accumulation):
            for index in saved["grads"] or []:
                if index >= len(params):
                    raise ValueError(f"{path!r}: accumulated gradient {index} does not fit torch model {name!r}")
                wanted[f"accumulation{position}.{index}"] = torch.empty_like(params[index])
    for key, value in wanted.items():
        entry = stored.get(key)
        if not isinstance(entry, TensorStorageMetadata):
            raise ValueError(f"{path!r} has no tensor {key!r} for torch model {name!r}")
        if tuple(entry.size) != tuple(value.shape):
            raise ValueError(f"{path!r}: tensor {key!r} has shape {tuple(entry.size)}, torch model {name!r} expects "
                             f"{tuple(value.shape)}")
    with warnings.catch_warnings():  # one process reading a checkpoint several wrote is what resharding 2 -> 1 is
        warnings.filterwarnings("ignore", message=".*assuming the intent is to load in a single process")
        dcp.load(wanted, storage_reader=reader, planner=_safe_planner())
    set_model_state_dict(model, {key[len("model."):]: value for key, value in wanted.items()
                                 if key.startswith("model.")})
    for optimizer, template in zip(optimizers, templates):
        set_optimizer_state_dict(model, optimizer, template)
        index = optimizers.index(optimizer)
        scaler, scaler_state = grad_scaler_of(optimizer), meta["scalers"][index]
        if scaler is not None and scaler_state is not None:
            scaler.load_state_dict(scaler_state)
    if load_optimizer:
        _restore_current_optimizer(model, optimizers, meta)
    if use_accumulation:
        for position, (state, saved) in enumerate(zip(states, accumulation)):
            state.pop("params", None)
            state["count"] = int(saved["count"])
            if saved["grads"] is None:
                state["grads"] = None
            else:
                grads: List[Optional[torch.Tensor]] = [None] * int(saved["length"])
                for index in saved["grads"]:
                    grads[index] = wanted[f"accumulation{position}.{index}"]
                state["grads"] = grads
    written_by = meta.get("world_size")
    if written_by != _world() and _rank() == 0:
        print(f"FastEstimator-Sharding: {name!r} was saved by {written_by} process(es) and is loaded into "
              f"{_world()}: its weights and optimizer state are resharded exactly")


def _load_local(model: torch.nn.Module, file: str, load_optimizer: bool) -> None:
    payload = torch.load(file, map_location=model_device(model), weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != _LOCAL_FORMAT:
        raise ValueError(f"{file!r} is not an fe_torch local shard file")
    with torch.no_grad():
        for key, value in model.state_dict().items():
            (value.to_local() if _is_dtensor(value) else value).copy_(payload["model"][key])
    if not load_optimizer:
        return
    for optimizer, saved in zip(scheduled_optimizers(getattr(model, "optimizer", None)), payload["optimizers"]):
        current = optimizer.state_dict()
        optimizer.load_state_dict(saved)  # the slices' state, as plain tensors: put them back into DTensors
        for param, state in optimizer.state.items():
            for key, value in list(state.items()):
                if _is_dtensor(param) and isinstance(value, torch.Tensor) and not _is_dtensor(value) and \
                        value.shape == param.to_local().shape and value.ndim:
                    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
                    state[key] = DTensor.from_local(value, param.device_mesh, param.placements,
                                                    shape=param.shape, stride=param.stride())
        del current
    for state, saved in zip(_accumulation_states(model), payload["accumulation"]):
        state.pop("params", None)
        state["count"] = int(saved["count"])
        grads = saved["grads"]
        if grads is not None:
            params = _trainable(model)
            from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
            grads = [None if grad is None else DTensor.from_local(grad, param.device_mesh, param.placements,
                                                                   shape=param.shape, stride=param.stride())
                     if _is_dtensor(param) else grad for grad, param in zip(grads, params)]
        state["grads"] = grads


def load_checkpoint_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> bool:
    """Load a model's state from a checkpoint directory if it is in a sharded format (`<name>.dcp/`, or this
    process's local shard file); a sharded model given an ordinary checkpoint (`<name>.pt`) gets it resharded.

    Returns:
        Whether it was handled here (False: an ordinary checkpoint for an ordinary model).
    """
    name = str(model.model_name)
    path = os.path.join(load_dir, dcp_dir_name(name))
    if os.path.isdir(path):
        _load_dcp(model, path, load_optimizer)
        return True
    local = os.path.join(load_dir, _local_file(name))
    if is_sharded(model) and os.path.isfile(local):
        _load_local(model, local, load_optimizer)
        return True
    if is_sharded(model):
        load_full_checkpoint(model, load_dir, load_optimizer)
        return True
    return False


# ------------------------------------------------------------------------------------------------ full weights
def full_state_dict(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """The whole model's weights on the CPU of rank 0 (an empty dict elsewhere): a collective for a sharded model."""
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        StateDictOptions, get_model_state_dict)
    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def load_full_weights(model: torch.nn.Module, read: Any, where: str) -> None:
    """Whole weights into a sharded model, read by rank 0 alone (`read()` returns the state dict): the others
    receive their slices from it (`set_model_state_dict(broadcast_from_rank0=True)`), so no other process holds the
    whole model in memory. Rank 0 checks the weights fit first, and a file that cannot be read or does not fit fails
    on every process alike (none is left waiting in a collective).

    Raises:
        ValueError: If rank 0 could not read the weights or they do not fit the model.
    """
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        StateDictOptions, set_model_state_dict)
    state: Dict[str, torch.Tensor] = {}
    failure: Optional[BaseException] = None
    if _rank() == 0:
        try:
            state = read()
            expected = {key: tuple(value.shape) for key, value in model.state_dict().items()}
            found = {key: tuple(value.shape) if isinstance(value, torch.Tensor) else None
                     for key, value in state.items()}
            if found != expected:
                missing = sorted(set(expected) - set(found))[:3]
                unexpected = sorted(set(found) - set(expected))[:3]
                shapes = sorted(key for key in set(found) & set(expected) if found[key] != expected[key])[:3]
                raise ValueError(f"The weights in {where} do not fit torch model {str(model.model_name)!r}: missing "
                                 f"{missing}, unexpected {unexpected}, other shapes {shapes}")
        except Exception as error:  # pylint: disable=broad-except  (every process raises it, below)
            failure = error
    if _world() > 1:
        message = [None if failure is None else f"{type(failure).__name__}: {failure}"]
        dist.broadcast_object_list(message, src=0)
        if failure is None and message[0] is not None:
            raise ValueError(f"Rank 0 could not load the weights in {where} into torch model "
                             f"{str(model.model_name)!r}: {message[0]}")
    if failure is not None:
        raise failure
    set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))


def load_full_state_dict(model: torch.nn.Module, state: Dict[str, torch.Tensor]) -> None:
    """Load ordinary (whole) weights into a sharded model: each process keeps its slices of them."""
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        StateDictOptions, set_model_state_dict)
    set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True))


def load_full_checkpoint(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> None:
    """A checkpoint of an ordinary model (one process: `<name>.pt`, `<name>_opt.pt`) into a sharded model."""
    from torch.distributed.checkpoint.state_dict import (  # pylint: disable=import-outside-toplevel
        StateDictOptions, set_optimizer_state_dict)
    from fe_torch import checkpoint  # pylint: disable=import-outside-toplevel
    name = str(model.model_name)
    checkpoint.load_weights(model, os.path.join(load_dir, checkpoint.weights_file_name(name)))
    if not load_optimizer:
        return
    path = os.path.join(load_dir, checkpoint.optimizer_file_name(name))
    payload = torch.load(path, map_location="cpu", weights_only=True) if os.path.isfile(path) else None
    if not isinstance(payload, dict) or payload.get("format") != "fe_torch.optimizer":
        raise ValueError(f"{path!r} is missing or not an fe_torch optimizer file for model {name!r}")
    optimizers = scheduled_optimizers(getattr(model, "optimizer", None))
    if len(payload["optimizers"]) != len(optimizers):
        raise ValueError(f"{path!r} holds {len(payload['optimizers'])} optimizer state(s), but torch model {name!r} "
                         f"has {len(optimizers)} optimizer(s)")
    names = {id(parameter): fqn for fqn, parameter in model.named_parameters()}
    for optimizer, saved in zip(optimizers, payload["optimizers"]):
        order = [names[id(parameter)] for group in optimizer.param_groups for parameter in group["params"]]
        state = {order[index]: dict(values) for index, values in saved["state"].items()}
        groups = [dict(group, params=[order[index] for index in group["params"]]) for group in saved["param_groups"]]
        set_optimizer_state_dict(model, optimizer, {"state": state, "param_groups": groups},
                                 options=StateDictOptions(full_state_dict=True))
    _restore_current_optimizer(model, optimizers, payload)
    accumulation = payload.get("accumulation") or []
    states = _accumulation_states(model)
    if len(accumulation) == len(states):
        from torch.distributed.tensor import distribute_tensor  # pylint: disable=import-outside-toplevel
        params = _trainable(model)
        for state, saved in zip(states, accumulation):
            grads = saved.get("grads")
            if grads is not None:  # whole gradients, in the order of the trainable parameters: keep this slice
                grads = [None if grad is None else
                         distribute_tensor(grad.to(param.device), param.device_mesh, param.placements)
                         if _is_dtensor(param) else grad.to(param.device) for grad, param in zip(grads, params)]
            state.pop("params", None)
            state["count"] = int(saved.get("count", 0))
            state["grads"] = grads
