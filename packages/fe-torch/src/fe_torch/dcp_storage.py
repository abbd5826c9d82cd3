"""torch's distributed checkpoint (DCP) storage as fe uses it: files hashed while they are written, read safely.

Writing: `HashingWriter` is DCP's `FileSystemWriter` whose streams hash every byte on its way to the file (fe's
`HashingWriter`), so each process knows the size and sha256 of the files it wrote (its `__<rank>_0.distcp`, and rank
0 the `.metadata`) without reading anything back; `sharded_checkpoint` gathers these digests to rank 0 for the
manifest.

Reading: DCP's own reader unpickles `.metadata` with `pickle.load` and reads non-tensor entries with
`torch.load(weights_only=False)`. fe reads `.metadata` through an unpickler that admits only DCP's metadata classes,
torch.Size, dtypes and paths (`safe_reader`), refuses a slice placed in a file outside the checkpoint's own folder,
refuses any non-tensor entry (`tensors_only_planner`), and reads the tensors with `torch.load(weights_only=True)`
(DCP's tensor path). `files_to_read` answers which files a process's read plan touches, so each process verifies
only those against the manifest before it loads.

Every DCP import is inside a function: on a torch without DCP, importing fe's checkpoint modules works and only
reading or writing a sharded checkpoint raises (one line naming the version).
"""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import threading
from typing import Any, Dict, Iterator, List, Set

import torch
from fe_core.checkpoint.hashed_file import HashingWriter as _ByteHasher
from fe_core.checkpoint.hashed_file import WrittenFile

__all__ = ["dcp_module", "hashing_writer", "safe_reader", "tensors_only_planner", "files_to_read", "METADATA_FILE"]

METADATA_FILE = ".metadata"


def dcp_module() -> Any:
    """`torch.distributed.checkpoint`.

    Raises:
        RuntimeError: One line naming the torch version, on a torch without it.
    """
    try:
        import torch.distributed.checkpoint as dcp  # pylint: disable=import-outside-toplevel
        from torch.distributed.checkpoint import filesystem  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as error:
        raise RuntimeError(f"Sharded checkpoints need torch's distributed checkpoint (torch >= 2.6); this is torch "
                           f"{torch.__version__} ({error})") from None
    return dcp


class _FileHasher(_ByteHasher):
    """fe's byte-hashing writer over an open file, which also gives DCP the file's descriptor (for its fsync)."""

    def fileno(self) -> int:
        return self._file.fileno()


def hashing_writer(path: str) -> Any:
    """A DCP `FileSystemWriter` into `path` (files fsynced) whose `written` dict maps each file name it wrote (the
    final names, `.metadata` included) to a `WrittenFile` with the size and sha256 of the bytes written."""
    dcp = dcp_module()
    from torch.distributed.checkpoint.filesystem import FileSystem  # pylint: disable=import-outside-toplevel
    written: Dict[str, WrittenFile] = {}
    lock = threading.Lock()  # DCP may write files from several threads

    class HashingFileSystem(FileSystem):
        @contextlib.contextmanager
        def create_stream(self, path: Any, mode: str) -> Iterator[Any]:
            if "w" not in mode:
                with super().create_stream(path, mode) as stream:
                    yield stream
                return
            with open(path, mode) as file:  # pylint: disable=unspecified-encoding  (binary)
                hasher = _FileHasher(file)
                yield hasher
                with lock:
                    written[os.path.basename(str(path))] = WrittenFile(os.path.basename(str(path)), hasher.size,
                                                                       hasher.hexdigest())

        def rename(self, path: Any, new_path: Any) -> None:
            super().rename(path, new_path)
            with lock:
                record = written.pop(os.path.basename(str(path)), None)
                if record is not None:
                    written[os.path.basename(str(new_path))] = record.renamed(os.path.basename(str(new_path)))

    writer = dcp.FileSystemWriter(path, sync_files=True)
    writer.fs = HashingFileSystem()
    writer.written = written
    return writer


# ------------------------------------------------------------------------------------------------ reading safely
_METADATA_CLASSES = ("Metadata", "MetadataIndex", "StorageMeta", "TensorProperties", "TensorStorageMetadata",
                     "ChunkStorageMetadata", "BytesStorageMetadata", "_MEM_FORMAT_ENCODING")
# The path DCP records as the checkpoint's id: pathlib's classes, which Python 3.13 moved to `pathlib._local`.
_PATH_CLASSES = ("PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath")


class MetadataUnpickler(pickle.Unpickler):
    """Reads DCP's `.metadata` admitting only what DCP writes there: its metadata dataclasses, its storage records,
    torch.Size, dtypes and layouts (looked up in tables, never by an arbitrary name) and the path it was saved to."""

    _ALLOWED = {("torch.distributed.checkpoint.metadata", name) for name in _METADATA_CLASSES} | {
        (module, name) for module in ("pathlib", "pathlib._local") for name in _PATH_CLASSES} | {
        ("torch.distributed.checkpoint.filesystem", "_StorageInfo"), ("torch", "Size"),
        ("torch.serialization", "_get_layout"), ("collections", "OrderedDict")}
    _DTYPES = {str(dtype).replace("torch.", ""): dtype for dtype in (
        torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128, torch.uint8,
        torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in self._DTYPES:
            return self._DTYPES[name]
        if (module, name) in self._ALLOWED:
            if module == "pathlib._local":  # written by Python 3.13+: the same class under its public name
                import pathlib  # pylint: disable=import-outside-toplevel
                return getattr(pathlib, name)
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"its .metadata names {module}.{name:.60}, which is not one of the classes a "
                                     f"distributed checkpoint's index holds")


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


def read_metadata(path: str) -> Any:
    """The DCP metadata of the checkpoint folder `path`, read safely.

    Raises:
        ValueError: If it names anything else than DCP's metadata, or places a slice outside the folder.
    """
    dcp_module()
    from torch.distributed.checkpoint.metadata import Metadata  # pylint: disable=import-outside-toplevel
    metadata_path = os.path.join(path, METADATA_FILE)
    with open(metadata_path, "rb") as file:
        try:
            metadata = MetadataUnpickler(io.BytesIO(file.read())).load()
        except Exception as error:  # pylint: disable=broad-except
            raise ValueError(f"{metadata_path!r} cannot be read safely: {error}") from None
    if not isinstance(metadata, Metadata):
        raise ValueError(f"{metadata_path!r} does not hold DCP metadata")
    _check_storage_files(metadata, metadata_path)
    return metadata


def safe_reader(path: str) -> Any:
    """A DCP `FileSystemReader` of `path` that reads its metadata with `read_metadata`."""
    dcp = dcp_module()
    from torch.distributed.checkpoint.metadata import StorageMeta  # pylint: disable=import-outside-toplevel

    class SafeReader(dcp.FileSystemReader):
        def read_metadata(self, *args: Any, **kwargs: Any) -> Any:
            metadata = read_metadata(path)
            if getattr(metadata, "storage_meta", None) is None:
                metadata.storage_meta = StorageMeta()
            metadata.storage_meta.load_id = self.load_id
            if metadata.planner_data is None:
                metadata.planner_data = {}
            return metadata

    return SafeReader(path)


def tensors_only_planner() -> Any:
    """DCP's default load planner, refusing any non-tensor entry (which DCP would read with an unrestricted
    `torch.load`)."""
    dcp = dcp_module()

    class TensorsOnlyPlanner(dcp.DefaultLoadPlanner):
        def load_bytes(self, read_item: Any, value: Any) -> None:
            raise ValueError(f"the distributed checkpoint holds a non-tensor entry {read_item.dest_index.fqn!r}; fe "
                             f"reads only tensors from it (never torch.load of arbitrary objects)")

    return TensorsOnlyPlanner()


def files_to_read(metadata: Any, wanted: Dict[str, torch.Tensor]) -> Set[str]:
    """The files of the checkpoint that loading `wanted` (this process's tensors: a DTensor asks for its slice) reads:
    the files of DCP's local read plan."""
    planner = tensors_only_planner()
    planner.set_up_planner(dict(wanted), metadata, False)
    plan = planner.create_local_plan()
    return {metadata.storage_data[item.storage_index].relative_path for item in plan.items}


def storage_files(metadata: Any) -> List[str]:
    """Every slice file the metadata names."""
    return sorted({info.relative_path for info in (metadata.storage_data or {}).values()})
