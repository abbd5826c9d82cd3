"""Checkpoints of sharded (FSDP2) models with torch's distributed checkpoint, inside fe's checkpoint directory.

In a checkpoint (RestoreWizard / `System.save_state`), a sharded model's weights, optimizer state(s) and pending
gradient accumulation are one distributed checkpoint in the folder `<name>.dcp/`:

    <name>.dcp/.metadata          DCP's index of the tensors (which process wrote which slice, where)
    <name>.dcp/__<rank>_0.distcp  each process's slices, written by that process (no process gathers the model)
    <name>.dcp/fe_sharded.json    everything that is not a tensor: optimizer hyper-parameters, the current optimizer,
                                  GradScaler state, accumulation counts, the number of processes that wrote it

How it fits fe's checkpoint format: `System.save_state` first lets every process write its slices into a staging
folder beside the checkpoint (`stage_models`, a collective), each process hashing the files it writes as it writes
them; the digests are gathered to rank 0, which moves each model's folder into the checkpoint's temporary directory
(`save_checkpoint_files`) and records them in the manifest (no process reads another's files back); the checkpoint is
then swapped in atomically. On resume fe_core verifies the manifest except the slice files, and each process verifies
the slice files its own read plan touches (`check_checkpoint_files`, a collective: every process refuses the
checkpoint if any found damage) before any model is changed; then every process reads the slices it needs
(`load_checkpoint_files`). DCP reshards, so a checkpoint written by 2 processes loads into 1 (an unsharded model) or
4, and a 1-process checkpoint (`<name>.pt` / `<name>_opt.pt`) loads into a sharded model (`single_file`).

Safety: loading never runs code from the checkpoint (see `dcp_storage`): fe stores no non-tensor entries in DCP (they
are in `fe_sharded.json`), reads `.metadata` through a restricted unpickler, and reads tensors weights-only.

`<name>.shards-<rank>-of-<N>.pt` is each process's own slices in one file: what `save_checkpoint_files` writes when
no distributed checkpoint was staged (a backend's `save_model` called directly on a sharded model).
"""
from __future__ import annotations

import json
import os
import shutil
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from fe_core.checkpoint.hashed_file import WrittenFile, file_sha256, write_hashed_file

from fe_torch.dcp_storage import dcp_module, files_to_read, hashing_writer, read_metadata, safe_reader, \
    tensors_only_planner
from fe_torch.devices import model_device
from fe_torch.model_state import accumulation_states, current_index, has_state, optimizers_of, \
    restore_accumulation, restore_current_optimizer, restore_hyperparameters, restore_scaler, scaler_state, trainable
from fe_torch.whole_weights import agree, barrier, distributed_api, is_dtensor, rank, world_size

__all__ = ["dcp_dir_name", "stage_models", "save_checkpoint_files", "check_checkpoint_files",
           "load_checkpoint_files", "read_meta", "is_slice_file", "META_FILE", "STAGING_NAME"]

META_FILE = "fe_sharded.json"
STAGING_NAME = ".fe-shards-staging"
_FORMAT = "fe_torch.sharded"
_LOCAL_FORMAT = "fe_torch.local_shards"
_VERSION = 1
_WRAPPER_PARTS = ("_checkpoint_wrapped_module", "_orig_mod", "_fsdp_wrapped_module")


def dcp_dir_name(model_name: str) -> str:
    """The folder of a sharded model's distributed checkpoint: `<name>.dcp`."""
    return f"{model_name}.dcp"


def is_slice_file(name: str) -> bool:
    """Whether a checkpoint file (its name relative to the checkpoint) is a process's slices in a distributed
    checkpoint (`<model>.dcp/__<rank>_<n>.distcp`): the files each process verifies itself, those it reads."""
    folder, _, file = str(name).replace(os.sep, "/").rpartition("/")
    return folder.endswith(".dcp") and "/" not in folder and file.endswith(".distcp")


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


def read_meta(path: str) -> Dict[str, Any]:
    """`fe_sharded.json` of the distributed checkpoint folder `path`.

    Raises:
        ValueError: If it cannot be read or is not of this format.
    """
    meta_path = os.path.join(path, META_FILE)
    try:
        with open(meta_path, "r", encoding="utf-8") as file:
            meta = _from_json(json.load(file))
    except (OSError, ValueError) as error:
        raise ValueError(f"Cannot read {meta_path!r}: {error}") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
        raise ValueError(f"{meta_path!r} is not an fe_torch sharded checkpoint of version {_VERSION}")
    return meta


# ------------------------------------------------------------------------------------------------ the state
def _fqn(name: str) -> str:
    """A parameter's name as torch's distributed state dicts spell it (without wrappers' module names)."""
    return ".".join(part for part in name.split(".") if part not in _WRAPPER_PARTS)


def _optimizer_parts(model: torch.nn.Module, optimizer: torch.optim.Optimizer, index: int
                     ) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
    """An optimizer's state as tensors for DCP (`optimizer<i>.<fqn>.<key>`) and plain values. An optimizer without
    state (not stepped yet) is saved as such: torch's `get_optimizer_state_dict` would create its state with a step
    at lr 0, and Adam's first real step would then count as its second."""
    if not has_state(optimizer):
        names = {id(parameter): _fqn(name) for name, parameter in model.named_parameters()}
        groups = [dict({key: value for key, value in group.items() if key != "params"},
                       params=[names[id(parameter)] for parameter in group["params"]])
                  for group in optimizer.param_groups]
        return {}, {"state": {}, "tensor_keys": {}, "param_groups": groups}
    osd = distributed_api("Saving a sharded checkpoint").get_optimizer_state_dict(model, optimizer)
    tensors: Dict[str, torch.Tensor] = {}
    plain: Dict[str, Any] = {}
    keys: Dict[str, List[str]] = {}
    for fqn, entries in osd["state"].items():
        keys[fqn] = []
        for key, value in entries.items():
            if isinstance(value, torch.Tensor) and (value.ndim or is_dtensor(value)):
                tensors[f"optimizer{index}.{fqn}.{key}"] = value
                keys[fqn].append(key)
            else:
                plain.setdefault(fqn, {})[key] = value
    return tensors, {"state": plain, "tensor_keys": {fqn: sorted(names) for fqn, names in keys.items()},
                     "param_groups": osd["param_groups"]}


def _tensors_and_meta(model: torch.nn.Module) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
    api = distributed_api("Saving a sharded checkpoint")
    tensors = {f"model.{key}": value for key, value in api.get_model_state_dict(model).items()}
    optimizers = optimizers_of(model)
    meta: Dict[str, Any] = {"format": _FORMAT, "version": _VERSION, "world_size": world_size(), "optimizers": []}
    for index, optimizer in enumerate(optimizers):
        part, plain = _optimizer_parts(model, optimizer, index)
        tensors.update(part)
        meta["optimizers"].append(plain)
    meta["current"] = current_index(model, optimizers)
    meta["scalers"] = [scaler_state(optimizer) for optimizer in optimizers]
    accumulation = []
    for position, state in enumerate(accumulation_states(model)):
        grads = state.get("grads")
        present = [] if grads is None else [index for index, grad in enumerate(grads) if grad is not None]
        for index in present:
            tensors[f"accumulation{position}.{index}"] = grads[index]
        accumulation.append({"count": int(state.get("count", 0)), "grads": None if grads is None else present,
                             "length": None if grads is None else len(grads)})
    meta["accumulation"] = accumulation
    return tensors, meta


# ------------------------------------------------------------------------------------------------ saving
def _staging_root(save_dir: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(save_dir)), STAGING_NAME)


def stage_models(models: Sequence[Any], save_dir: str, sharded: Sequence[bool]) -> None:
    """Every process writes its slices of the sharded models (`sharded[i]`) into a staging folder beside `save_dir`,
    hashing each file as it writes it, and the digests are gathered to rank 0 (a collective: every process calls it,
    at the same point); rank 0 then moves the folders into the checkpoint (`save_checkpoint_files`)."""
    chosen = [model for model, flag in zip(models, sharded) if flag]
    if not chosen:
        return
    dcp = dcp_module()
    staging = _staging_root(save_dir)
    if rank() == 0:
        shutil.rmtree(staging, ignore_errors=True)  # left by a process killed while saving
        os.makedirs(staging)
    barrier()
    for model in chosen:
        path = os.path.join(staging, dcp_dir_name(str(model.model_name)))
        tensors, meta = _tensors_and_meta(model)
        writer = hashing_writer(path)
        dcp.save(tensors, storage_writer=writer)
        written: List[WrittenFile] = list(writer.written.values())
        if rank() == 0:
            text = json.dumps(_to_json(meta), allow_nan=False).encode("utf-8")
            written.append(write_hashed_file(os.path.join(path, META_FILE), lambda file: file.write(text)
                                             ).renamed(META_FILE))
        digests = _gather_to_rank0(written)
        if rank() == 0:
            model.__dict__["fe_staged"] = (path, {str(record): record for part in digests for record in part})
    barrier()


def _gather_to_rank0(value: Any) -> List[Any]:
    if world_size() == 1:
        return [value]
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel
    gathered: Optional[List[Any]] = [None] * world_size() if rank() == 0 else None
    dist.gather_object(value, gathered, dst=0)
    return gathered or []


def save_checkpoint_files(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> List[str]:
    """A sharded model's files in a checkpoint being written into `save_dir` (rank 0): its staged distributed
    checkpoint moved in, each file with the digest its writer reported. Without a staged one (a backend's
    `save_model` called directly), this process's own slices in `<name>.shards-<rank>-of-<N>.pt`."""
    name = str(model.model_name)
    staged = model.__dict__.pop("fe_staged", None)
    os.makedirs(save_dir, exist_ok=True)
    # only the checkpoint being written beside the staging folder takes it (not, say, a backup after a failed save)
    if staged is not None and os.path.dirname(staged[0]) == _staging_root(save_dir) and os.path.isdir(staged[0]):
        path, digests = staged
        target = os.path.join(save_dir, dcp_dir_name(name))
        os.replace(path, target)
        try:
            os.rmdir(os.path.dirname(path))  # the staging folder, once every model has been moved out of it
        except OSError:
            pass
        files: List[str] = []
        for file in sorted(os.listdir(target)):
            relative = os.path.join(dcp_dir_name(name), file)
            files.append(digests[file].renamed(relative) if file in digests else relative)
        return files
    return [_save_local(model, save_dir, save_optimizer)]


def _local_file(name: str) -> str:
    return f"{name}.shards-{rank()}-of-{world_size()}.pt"


def _localize(value: Any) -> Any:
    if is_dtensor(value):
        return value.to_local()
    if isinstance(value, dict):
        return {key: _localize(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_localize(item) for item in value)
    return value


def _save_local(model: torch.nn.Module, save_dir: str, save_optimizer: bool) -> str:
    name = str(model.model_name)
    optimizers = optimizers_of(model) if save_optimizer else []
    payload = {"format": _LOCAL_FORMAT, "model": _localize(dict(model.state_dict())),
               "optimizers": [_localize(optimizer.state_dict()) for optimizer in optimizers],
               "accumulation": [{"count": int(state.get("count", 0)), "grads": _localize(state.get("grads"))}
                                for state in accumulation_states(model)]}
    file = _local_file(name)
    return write_hashed_file(os.path.join(save_dir, file), lambda handle: torch.save(payload, handle)).renamed(file)


# ------------------------------------------------------------------------------------------------ loading
def _targets(model: torch.nn.Module, path: str, meta: Dict[str, Any], stored: Dict[str, Any], load_optimizer: bool,
             allocate: bool) -> Tuple[Dict[str, torch.Tensor], List[Optional[Dict[str, Any]]]]:
    """The tensors to read from the checkpoint (this process's: a DTensor asks for its slice), checked against the
    metadata, and the optimizer state dicts they complete (None: an optimizer saved before its first step).

    Without `allocate`, the optimizer and accumulation entries are the parameters themselves (same shape and
    placement): enough to plan the reads and check shapes, and nothing is allocated or changed."""
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata  # pylint: disable=import-outside-toplevel
    name = str(model.model_name)
    api = distributed_api("Loading a sharded checkpoint")
    wanted: Dict[str, torch.Tensor] = {f"model.{key}": value for key, value in api.get_model_state_dict(model).items()}
    optimizers = optimizers_of(model) if load_optimizer else []
    if load_optimizer and len(optimizers) != len(meta["optimizers"]):
        raise ValueError(f"{path!r} holds {len(meta['optimizers'])} optimizer state(s), but torch model {name!r} has "
                         f"{len(optimizers)} optimizer(s)")
    parameters = {_fqn(fqn): parameter for fqn, parameter in model.named_parameters()}
    templates: List[Optional[Dict[str, Any]]] = []
    for index, optimizer in enumerate(optimizers):
        saved = meta["optimizers"][index]
        if len(saved["param_groups"]) != len(optimizer.param_groups):
            raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r}: "
                             f"{len(saved['param_groups'])} parameter group(s), the optimizer has "
                             f"{len(optimizer.param_groups)}")
        if not saved["state"] and not saved["tensor_keys"]:
            templates.append(None)  # saved before its first step: hyper-parameters only
            continue
        fallback: Optional[Dict[str, Any]] = None
        state: Dict[str, Dict[str, Any]] = {}
        for fqn, keys in saved["tensor_keys"].items():
            parameter = parameters.get(fqn)
            if parameter is None:
                raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r} "
                                 f"(parameter {fqn!r})")
            state[fqn] = {}
            for key in keys:
                entry = stored.get(f"optimizer{index}.{fqn}.{key}")
                if isinstance(entry, TensorStorageMetadata) and tuple(entry.size) == tuple(parameter.shape):
                    target = torch.empty_like(parameter, dtype=entry.properties.dtype, requires_grad=False) \
                        if allocate else parameter
                elif not allocate:  # checked when loading (torch's template below may create the state)
                    continue
                else:  # state not shaped like its parameter: torch's own template (may create the state)
                    if fallback is None:
                        fallback = api.get_optimizer_state_dict(model, optimizer)["state"]
                    target = (fallback.get(fqn) or {}).get(key)
                    if target is None:
                        raise ValueError(f"Optimizer {index} state in {path!r} does not fit torch model {name!r} "
                                         f"(parameter {fqn!r}, {key!r})")
                state[fqn][key] = target
                wanted[f"optimizer{index}.{fqn}.{key}"] = target
        for fqn, values in saved["state"].items():
            state.setdefault(fqn, {}).update(values)
        templates.append({"state": state, "param_groups": saved["param_groups"]})
    accumulation = meta.get("accumulation") or []
    if load_optimizer and len(accumulation) == len(accumulation_states(model)):
        params = trainable(model)
        for position, saved in enumerate(accumulation):
            for index in saved["grads"] or []:
                if index >= len(params):
                    raise ValueError(f"{path!r}: accumulated gradient {index} does not fit torch model {name!r}")
                wanted[f"accumulation{position}.{index}"] = torch.empty_like(params[index], requires_grad=False) \
                    if allocate else params[index]
    for key, value in wanted.items():
        entry = stored.get(key)
        if not isinstance(entry, TensorStorageMetadata):
            raise ValueError(f"{path!r} has no tensor {key!r} for torch model {name!r}")
        if tuple(entry.size) != tuple(value.shape):
            raise ValueError(f"{path!r}: tensor {key!r} has shape {tuple(entry.size)}, torch model {name!r} expects "
                             f"{tuple(value.shape)}")
    return wanted, templates


def check_checkpoint_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool, collective: bool,
                           digests: Optional[Dict[str, Dict[str, Any]]] = None, unverified: Sequence[str] = ()
                           ) -> bool:
    """Before anything is loaded: whether the model's distributed checkpoint in `load_dir` fits it, and (with the
    manifest's `digests`) that the slice files this process's read plan touches, among those not yet verified
    (`unverified`, names relative to `load_dir`), are undamaged. With `collective` (a sharded model, whose processes
    read different files), every process refuses the checkpoint if one process found a problem. Nothing is changed
    or allocated.

    Returns:
        Whether `load_dir` holds the model in a sharded format (False: its single files, checked elsewhere).

    Raises:
        ValueError: If it does not fit or a file is damaged.
    """
    name = str(model.model_name)
    path = os.path.join(load_dir, dcp_dir_name(name))
    if not os.path.isdir(path):
        return os.path.isfile(os.path.join(load_dir, _local_file(name)))  # this process's slices: read as they are
    failure: Optional[BaseException] = None
    try:
        metadata = read_metadata(path)
        wanted, _ = _targets(model, path, read_meta(path), metadata.state_dict_metadata, load_optimizer,
                             allocate=False)
        pending = {str(file) for file in unverified}
        for file in sorted(files_to_read(metadata, wanted)):
            relative = f"{dcp_dir_name(name)}/{file}"
            if relative not in pending:
                continue
            entry = (digests or {}).get(relative)
            full = os.path.join(path, file)
            if entry is None:
                raise ValueError(f"Checkpoint file {full!r} is not listed in the checkpoint's manifest")
            size = os.path.getsize(full) if os.path.isfile(full) else None
            if size != entry["size"]:
                raise ValueError(f"Checkpoint file {full!r} is corrupt: expected {entry['size']} bytes, found {size}")
            digest = file_sha256(full)
            if digest != entry["sha256"]:
                raise ValueError(f"Checkpoint file {full!r} is corrupt: expected sha256 {entry['sha256']}, found "
                                 f"{digest}")
    except Exception as error:  # pylint: disable=broad-except  (every process raises, in agree)
        failure = error
    if collective:
        agree(failure, f"use the distributed checkpoint {path!r}")
    elif failure is not None:
        raise failure
    return True


def _load_dcp(model: torch.nn.Module, path: str, load_optimizer: bool) -> None:
    dcp = dcp_module()
    api = distributed_api("Loading a sharded checkpoint")
    name = str(model.model_name)
    meta = read_meta(path)
    reader = safe_reader(path)
    wanted, templates = _targets(model, path, meta, reader.read_metadata().state_dict_metadata, load_optimizer,
                                 allocate=True)
    with warnings.catch_warnings():  # one process reading a checkpoint several wrote is what resharding 2 -> 1 is
        warnings.filterwarnings("ignore", message=".*assuming the intent is to load in a single process")
        dcp.load(wanted, storage_reader=reader, planner=tensors_only_planner())
    api.set_model_state_dict(model, {key[len("model."):]: value for key, value in wanted.items()
                                     if key.startswith("model.")})
    optimizers = optimizers_of(model) if load_optimizer else []
    for index, (optimizer, template) in enumerate(zip(optimizers, templates)):
        if template is None:
            restore_hyperparameters(optimizer, meta["optimizers"][index]["param_groups"], repr(path))
        else:
            api.set_optimizer_state_dict(model, optimizer, template)
        restore_scaler(optimizer, meta["scalers"][index])
    if load_optimizer:
        restore_current_optimizer(model, optimizers, meta)

        def grads(position: int, saved: Dict[str, Any]) -> Optional[List[Any]]:
            if saved["grads"] is None:
                return None
            found: List[Optional[torch.Tensor]] = [None] * int(saved["length"])
            for index in saved["grads"]:
                found[index] = wanted[f"accumulation{position}.{index}"]
            return found

        restore_accumulation(model, meta.get("accumulation") or [], grads)
    written_by = meta.get("world_size")
    if written_by != world_size() and rank() == 0:
        print(f"FastEstimator-Sharding: {name!r} was saved by {written_by} process(es) and is loaded into "
              f"{world_size()}: its weights and optimizer state are resharded exactly")


def _load_local(model: torch.nn.Module, file: str, load_optimizer: bool) -> None:
    payload = torch.load(file, map_location=model_device(model), weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != _LOCAL_FORMAT:
        raise ValueError(f"{file!r} is not an fe_torch local shard file")
    with torch.no_grad():
        for key, value in model.state_dict().items():
            (value.to_local() if is_dtensor(value) else value).copy_(payload["model"][key])
    if not load_optimizer:
        return
    for optimizer, saved in zip(optimizers_of(model), payload["optimizers"]):
        optimizer.load_state_dict(saved)  # the slices' state, as plain tensors: put them back into DTensors
        for param, state in optimizer.state.items():
            for key, value in list(state.items()):
                if is_dtensor(param) and isinstance(value, torch.Tensor) and not is_dtensor(value) and \
                        value.shape == param.to_local().shape and value.ndim:
                    from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
                    state[key] = DTensor.from_local(value, param.device_mesh, param.placements,
                                                    shape=param.shape, stride=param.stride())
    params = trainable(model)

    def grads(position: int, saved: Dict[str, Any]) -> Optional[List[Any]]:
        del position
        found = saved["grads"]
        if found is None:
            return None
        from torch.distributed.tensor import DTensor  # pylint: disable=import-outside-toplevel
        return [None if grad is None else DTensor.from_local(grad, param.device_mesh, param.placements,
                                                              shape=param.shape, stride=param.stride())
                if is_dtensor(param) else grad for grad, param in zip(found, params)]

    restore_accumulation(model, payload["accumulation"], grads)


def load_checkpoint_files(model: torch.nn.Module, load_dir: str, load_optimizer: bool) -> bool:
    """Load a model's state from `load_dir` if it is there in a sharded format: `<name>.dcp/` (into a sharded or an
    ordinary model: DCP reshards), or this process's own slices (`<name>.shards-<rank>-of-<N>.pt`).

    Returns:
        Whether it was there (False: `load_dir` holds the model's single files, or nothing of it).
    """
    name = str(model.model_name)
    path = os.path.join(load_dir, dcp_dir_name(name))
    if os.path.isdir(path):
        _load_dcp(model, path, load_optimizer)
        return True
    local = os.path.join(load_dir, _local_file(name))
    if os.path.isfile(local):
        _load_local(model, local, load_optimizer)
        return True
    return False
