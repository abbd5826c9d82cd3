"""The checkpoint directory: what files it holds, how it is written atomically and verified before it is read.

Layout::

    system.json   {"format": "fe-checkpoint", "version": 1,
                   "system": {plain System attributes},
                   "models": [{"name": "model", "files": ["model.pt", "model_opt.pt"], "optimizer": true}, ...],
                   "files": {"state.json": {"size": 123, "sha256": "..."}, "arrays.npz": {...}, "model.pt": {...}}}
    state.json    everything else (summary, trace/op/dataset states, random states), encoded by `StateCodec`
    arrays.npz    the numpy arrays `state.json` references by name (read with allow_pickle=False)
    <model files> whatever each backend's `save_model` wrote, in the framework's own safe format

The manifest in `system.json` lists every other file with its size and sha256, and `system_sha256` covers the rest of
`system.json` itself (version 2); reading verifies all of them before decoding anything, except the files a backend
verifies as it reads them (a sharded model's slices: each process hashes only the files its read plan touches, before
any model is changed; `read_checkpoint(verified_when_read=...)`). The sizes and digests come
from the bytes the writers meant to write (`fe_core.checkpoint.hashed_file`): `state.json` and `arrays.npz` are
hashed as they are written, and so is every model file whose backend's `save_model` reports a `WrittenFile`; only
files without a reported digest (a backend that returns plain names) are hashed by reading them back. So a file
damaged after its write, even before the manifest is written, is refused when the checkpoint is read.

There is no pickle anywhere in the format, and nothing is read through a symbolic link: a checkpoint directory that
is, or holds, a link is refused, so a checkpoint written by someone else cannot make fe read files outside it.
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional

import numpy as np

from fe_core.checkpoint.atomic_dir import atomic_directory, find_directory
from fe_core.checkpoint.codec import CheckpointDecodeError, StateCodec
from fe_core.checkpoint.hashed_file import WrittenFile, file_sha256, write_hashed_file

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "SYSTEM_FILE", "STATE_FILE", "ARRAYS_FILE", "SavedModel", "Checkpoint",
           "write_checkpoint", "read_checkpoint", "read_manifest", "verify_file", "is_checkpoint"]

FORMAT_NAME = "fe-checkpoint"
FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)  # version 1 had no system_sha256
SYSTEM_FILE = "system.json"
STATE_FILE = "state.json"
ARRAYS_FILE = "arrays.npz"


@dataclass
class SavedModel:
    """The files one model's backend wrote into a checkpoint.

    Args:
        name: The model's name.
        files: The file names (relative to the checkpoint directory); a `WrittenFile` carries the size and sha256 of
            the bytes the backend wrote, which the manifest then records instead of re-reading the file.
        optimizer: Whether the optimizer state was saved too.
        auto_name: Whether the name was given automatically by `build` ('model', 'model1', ...), so that a re-run of
            the script in the same process (whose automatic names count on) may still use the checkpoint.
    """
    name: str
    files: List[str] = field(default_factory=list)
    optimizer: bool = False
    auto_name: bool = False


@dataclass
class Checkpoint:
    """A verified, decoded checkpoint.

    Args:
        directory: The directory it was read from (the backup sibling after an interrupted save).
        system: The plain System attributes.
        state: The decoded contents of `state.json` + `arrays.npz`.
        models: The saved models, in order.
        files: The manifest: each file's size and sha256, by name relative to `directory`.
        unverified: The files whose sha256 was left to the processes that read them (`read_checkpoint`'s
            `verified_when_read`); their presence and size were checked.
    """
    directory: str
    system: Dict[str, Any]
    state: Dict[str, Any]
    models: List[SavedModel]
    files: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    unverified: List[str] = field(default_factory=list)


def _reported_digests(written: Iterable[str]) -> Dict[str, WrittenFile]:
    """The digests writers reported, by manifest name (names that are plain strings reported none)."""
    return {name.replace(os.sep, "/"): name for name in written if isinstance(name, WrittenFile)}


def _manifest(directory: str, reported: Dict[str, WrittenFile]) -> Dict[str, Dict[str, Any]]:
    """Every file below `directory` but `system.json`: the size and sha256 its writer reported, else read back."""
    files: Dict[str, Dict[str, Any]] = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory).replace(os.sep, "/")
            if relative == SYSTEM_FILE:
                continue
            known = reported.get(relative)
            if known is not None:
                files[relative] = {"size": known.size, "sha256": known.sha256}
            else:
                files[relative] = {"size": os.path.getsize(path), "sha256": file_sha256(path)}
    return dict(sorted(files.items()))


def _plain_json(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write a {type(value).__name__} into {SYSTEM_FILE}")


def is_checkpoint(directory: str) -> bool:
    """Whether `directory` holds a `system.json` of this format (contents are not verified)."""
    try:
        with open(os.path.join(directory, SYSTEM_FILE), "r", encoding="utf-8") as file:
            return json.load(file).get("format") == FORMAT_NAME
    except (OSError, ValueError, AttributeError):
        return False


def write_checkpoint(save_dir: str,
                     system: Dict[str, Any],
                     state: Dict[str, Any],
                     save_models: Optional[Callable[[str], List[SavedModel]]] = None,
                     codec: Optional[StateCodec] = None) -> None:
    """Write a checkpoint atomically: `save_dir` is either the previous checkpoint or the new one, never a mix.

    Args:
        save_dir: The checkpoint directory (created, or replaced as a whole).
        system: Plain JSON attributes for `system.json`.
        state: Everything else (encoded with `codec`).
        save_models: Called with the temporary directory; writes the model files there and describes them. Files
            given as `WrittenFile`s are recorded with the digests they carry (the bytes meant to be written).
        codec: The state codec (default: one with the loaded backends' reducers).

    Raises:
        CheckpointEncodeError: If `state` holds something that cannot be stored (nothing is written then).
        ValueError: If `save_dir` exists, is not empty and is not a checkpoint (it is never replaced then).
    """
    codec = codec or StateCodec()
    state_data, arrays = codec.encode(state, path="")  # fail before touching the disk
    state_text = json.dumps(state_data, allow_nan=False, separators=(",", ":"))
    system_part = json.loads(json.dumps(system, default=_plain_json, allow_nan=False))
    save_dir = os.path.abspath(save_dir)
    if os.path.isdir(save_dir) and os.listdir(save_dir) and not is_checkpoint(save_dir):
        raise ValueError(f"Refusing to save a checkpoint into {save_dir!r}: it is a non-empty directory that is not "
                         f"an fe checkpoint, and saving replaces the whole directory")
    if os.path.lexists(save_dir) and not os.path.isdir(save_dir):
        raise ValueError(f"Refusing to save a checkpoint at {save_dir!r}: it exists and is not a directory")
    state_bytes = state_text.encode("utf-8")
    with atomic_directory(save_dir) as tmp:
        written = [write_hashed_file(os.path.join(tmp, STATE_FILE), lambda file: file.write(state_bytes)
                                     ).renamed(STATE_FILE),
                   write_hashed_file(os.path.join(tmp, ARRAYS_FILE), lambda file: np.savez(file, **arrays)
                                     ).renamed(ARRAYS_FILE)]
        models = save_models(tmp) if save_models is not None else []
        for model in models:
            for name in model.files:
                if not os.path.isfile(os.path.join(tmp, name)):
                    raise FileNotFoundError(f"The backend reported writing {name!r} for model {model.name!r}, but "
                                            f"that file does not exist")
        meta = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "system": system_part,
            "models": [{"name": m.name, "files": [f.replace(os.sep, "/") for f in m.files], "optimizer": m.optimizer,
                        "auto_name": m.auto_name} for m in models],
            "files": _manifest(tmp, _reported_digests(written + [name for m in models for name in m.files])),
        }
        meta["system_sha256"] = _meta_digest(meta)
        with open(os.path.join(tmp, SYSTEM_FILE), "w", encoding="utf-8") as file:
            json.dump(meta, file, indent=2, allow_nan=False)


def _meta_digest(meta: Dict[str, Any]) -> str:
    """The sha256 of everything in `system.json` but the digest itself (canonical JSON)."""
    covered = {key: value for key, value in meta.items() if key != "system_sha256"}
    return hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _refuse_links(directory: str) -> None:
    """Raise ValueError if `directory` is a symbolic link or anything inside it is one."""
    if os.path.islink(directory):
        raise ValueError(f"Checkpoint {directory!r} is a symbolic link; checkpoints are read only from real "
                         f"directories")
    for root, dirs, names in os.walk(directory, followlinks=False):
        for name in dirs + names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                raise ValueError(f"Checkpoint {directory!r} holds a symbolic link {path!r}; nothing is read through "
                                 f"links")


def _read_json(path: str) -> Any:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Checkpoint file {path!r} is missing")
    try:
        with open(path, "r", encoding="utf-8") as file:
            return json.load(file)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"Checkpoint file {path!r} is not valid JSON: {error}") from error


def _safe_relative(name: Any) -> bool:
    if not isinstance(name, str) or not name or name.startswith("/") or "\\" in name or ":" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def verify_file(directory: str, name: str, entry: Dict[str, Any], hash_it: bool = True) -> None:
    """Check a checkpoint file against its manifest entry: present, of the recorded size and (with `hash_it`) sha256.

    Args:
        directory: The checkpoint directory.
        name: The file's name relative to it ('/'-separated, as in the manifest).
        entry: Its manifest entry, `{"size": int, "sha256": str}`.
        hash_it: Read the file and compare its sha256 too.

    Raises:
        FileNotFoundError: If the file is missing.
        ValueError: If its size or sha256 differs.
    """
    path = os.path.join(directory, *name.split("/"))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Checkpoint file {path!r} is missing (listed in "
                                f"{os.path.join(directory, SYSTEM_FILE)!r})")
    size = os.path.getsize(path)
    if size != entry["size"]:
        raise ValueError(f"Checkpoint file {path!r} is corrupt: expected {entry['size']} bytes, found {size}")
    if hash_it:
        digest = file_sha256(path)
        if digest != entry["sha256"]:
            raise ValueError(f"Checkpoint file {path!r} is corrupt: expected sha256 {entry['sha256']}, "
                             f"found {digest}")


def _verify_manifest(directory: str, files: Any, verified_when_read: Optional[Callable[[str], bool]] = None
                     ) -> List[str]:
    """Verify every file of the manifest; those `verified_when_read` names only for presence and size. Returns
    those."""
    manifest_path = os.path.join(directory, SYSTEM_FILE)
    if not isinstance(files, dict):
        raise ValueError(f"{manifest_path!r} has no 'files' manifest")
    for required in (STATE_FILE, ARRAYS_FILE):
        if required not in files:
            raise ValueError(f"The manifest in {manifest_path!r} does not list {required!r}")
    unverified = []
    for name, entry in files.items():
        if not _safe_relative(name):
            raise ValueError(f"The manifest in {manifest_path!r} names an unsafe path {name!r}")
        if not isinstance(entry, dict) or type(entry.get("size")) is not int or \
                not isinstance(entry.get("sha256"), str):
            raise ValueError(f"The manifest in {manifest_path!r} has a malformed entry for {name!r}")
        later = verified_when_read is not None and name not in (STATE_FILE, ARRAYS_FILE) and \
            bool(verified_when_read(name))
        verify_file(directory, name, entry, hash_it=not later)
        if later:
            unverified.append(name)
    return unverified


def _saved_models(meta: Dict[str, Any], manifest_path: str) -> List[SavedModel]:
    models = meta.get("models", [])
    if not isinstance(models, list):
        raise ValueError(f"{manifest_path!r}: 'models' should be a list")
    saved = []
    for index, entry in enumerate(models):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or \
                not isinstance(entry.get("files"), list) or not isinstance(entry.get("optimizer"), bool):
            raise ValueError(f"{manifest_path!r}: malformed entry models[{index}]")
        for name in entry["files"]:
            if name not in meta["files"]:
                raise ValueError(f"{manifest_path!r}: model {entry['name']!r} file {name!r} is not in the manifest")
        auto_name = entry.get("auto_name", False)
        if not isinstance(auto_name, bool):
            raise ValueError(f"{manifest_path!r}: models[{index}].auto_name should be true or false")
        saved.append(SavedModel(entry["name"], list(entry["files"]), entry["optimizer"], auto_name))
    return saved


def read_manifest(load_dir: str) -> Dict[str, Any]:
    """The verified `system.json` of a checkpoint (its format, version and `system_sha256`), files not verified.

    Args:
        load_dir: The checkpoint directory.

    Returns:
        Its content; `["files"]` is the manifest (each file's size and sha256).

    Raises:
        FileNotFoundError: If the directory or `system.json` is missing.
        ValueError: If `system.json` is not a checkpoint's of a readable version, or differs from its sha256.
    """
    manifest_path = os.path.join(os.path.abspath(load_dir), SYSTEM_FILE)
    meta = _read_json(manifest_path)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{manifest_path!r} is not an fe checkpoint: expected format {FORMAT_NAME!r}, "
                         f"found {found!r}")
    version = meta.get("version")
    if isinstance(version, bool) or version not in _READABLE_VERSIONS:
        raise ValueError(f"{manifest_path!r} has checkpoint format version {version!r}; this fe-core reads versions "
                         f"{list(_READABLE_VERSIONS)}")
    if version >= 2 and meta.get("system_sha256") != _meta_digest(meta):
        raise ValueError(f"{manifest_path!r} is corrupt: its contents do not match its system_sha256")
    if not isinstance(meta.get("files"), dict):
        raise ValueError(f"{manifest_path!r} has no 'files' manifest")
    return meta


def read_checkpoint(load_dir: str, codec: Optional[StateCodec] = None,
                    verified_when_read: Optional[Callable[[str], bool]] = None) -> Checkpoint:
    """Verify and decode a checkpoint written by `write_checkpoint`.

    If `load_dir` is missing but the backup left by a save interrupted between its two renames exists, the backup is
    read (with a RuntimeWarning).

    Args:
        load_dir: The checkpoint directory.
        codec: The state codec (default: one with the loaded backends' reducers).
        verified_when_read: Names the files (relative names) whose sha256 the process that reads them checks itself
            (a sharded model's slices, each process reading its own): here only their presence and size are checked,
            and they are listed in the result's `unverified`. Default: every file is hashed here.

    Returns:
        The verified checkpoint.

    Raises:
        FileNotFoundError: If the directory or a file it lists is missing.
        ValueError: If the format or version is wrong, `system.json` or a file differs from its sha256, the directory
            is or holds a symbolic link, or the state is malformed or names something outside the codec's allowlist (`CheckpointDecodeError`).
    """
    directory = find_directory(os.path.abspath(load_dir))
    if directory is None:
        raise FileNotFoundError(f"No checkpoint directory at {os.path.abspath(load_dir)!r}")
    _refuse_links(directory)
    manifest_path = os.path.join(directory, SYSTEM_FILE)
    meta = read_manifest(directory)
    unverified = _verify_manifest(directory, meta.get("files"), verified_when_read)
    models = _saved_models(meta, manifest_path)
    system = meta.get("system")
    if not isinstance(system, dict):
        raise ValueError(f"{manifest_path!r} has no 'system' attributes")
    state_data = _read_json(os.path.join(directory, STATE_FILE))
    arrays_path = os.path.join(directory, ARRAYS_FILE)
    codec = codec or StateCodec()
    try:
        with np.load(arrays_path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        raise ValueError(f"Checkpoint file {arrays_path!r} could not be read: {error}") from error
    try:
        state = codec.decode(state_data, arrays, path="")
    except CheckpointDecodeError as error:
        raise CheckpointDecodeError(f"{os.path.join(directory, STATE_FILE)!r}: {error}") from error
    if not isinstance(state, dict):
        raise ValueError(f"{os.path.join(directory, STATE_FILE)!r} should hold a dict")
    return Checkpoint(directory=directory, system=system, state=state, models=models, files=dict(meta["files"]),
                      unverified=unverified)
