"""Moving task results between processes: pickle protocol 5 with the large buffers in a shared-memory file.

`encode` pickles an object with protocol 5, collecting the buffers of its numpy arrays out of band. Below a threshold
the object is pickled in band (small batches: one pipe message is cheapest). Above it, the buffers are written once
into a fresh file in shared memory (`/dev/shm` on Linux, the temporary directory elsewhere), whose name travels with
the small pickle. `decode` maps that file, unlinks it at once, and unpickles with buffers that are slices of the
mapping: the arrays the trainer gets are backed by the shared memory itself (no copy), and the memory is returned when
the last array that uses it is freed. A file per message means no buffer is ever reused while user code may still
hold a batch. Disk space is reserved before writing (`posix_fallocate`), so a full `/dev/shm` (small in containers)
falls back to an in-band pickle instead of failing with SIGBUS.
"""
from __future__ import annotations

import mmap
import os
import pickle
import tempfile
from typing import Any, List, Optional, Sequence, Tuple

__all__ = ["shared_directory", "encode", "decode", "discard", "remove_files"]

_ALIGN = 64
Message = Tuple[bytes, Optional[str], Optional[Sequence[Tuple[int, int]]]]


def shared_directory() -> str:
    """Where the shared-memory files go: /dev/shm when it is a writable directory, else the temporary directory."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


def _reserve(fd: int, size: int) -> bool:
    fallocate = getattr(os, "posix_fallocate", None)
    try:
        if fallocate is not None:
            fallocate(fd, 0, size)
        else:
            os.ftruncate(fd, size)
        return True
    except OSError:
        return False


def encode(value: Any, directory: str, name: str, threshold: int) -> Message:
    """Pickle `value`; put its out-of-band buffers in the shared file `name` when they total `threshold` bytes or more.

    Returns:
        (pickle bytes, file name or None, the (offset, length) of each buffer in the file or None).
    """
    buffers: List[pickle.PickleBuffer] = []
    data = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    if not buffers:
        return data, None, None
    raws = [buffer.raw() for buffer in buffers]
    spans = []
    total = 0
    for raw in raws:
        spans.append((total, raw.nbytes))
        total += (raw.nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    if total >= threshold > 0:
        path = os.path.join(directory, name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            if _reserve(fd, total):
                with mmap.mmap(fd, total) as mapped:
                    for (offset, length), raw in zip(spans, raws):
                        mapped[offset:offset + length] = raw
                return data, name, spans
        finally:
            os.close(fd)
        os.unlink(path)  # no room in shared memory: send it through the pipe instead
    return pickle.dumps(value, protocol=5), None, None


def decode(message: Message, directory: str) -> Any:
    """Unpickle `encode`'s message; arrays from a shared file are views of it (the file is unlinked here)."""
    data, name, spans = message
    if name is None:
        return pickle.loads(data)
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_RDWR)
    try:
        mapped = mmap.mmap(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
        os.unlink(path)
    view = memoryview(mapped)
    return pickle.loads(data, buffers=[view[offset:offset + length] for offset, length in spans or ()])


def discard(message: Message, directory: str) -> None:
    """Drop a message that will not be decoded (its shared file, if any, is removed)."""
    name = message[1]
    if name is not None:
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass


def remove_files(directory: str, prefix: str) -> int:
    """Remove the shared files whose names start with `prefix`; returns how many were removed."""
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except OSError:
                pass
    return removed
