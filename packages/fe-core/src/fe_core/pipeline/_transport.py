"""Moving task results between processes: pickle protocol 5 with the large buffers in a shared-memory file.

`encode` pickles an object with protocol 5, collecting the buffers of its numpy arrays out of band. Below a threshold
the object is pickled in band (small batches: one pipe message is cheapest). Above it, the buffers are written once
into a fresh file in shared memory (`/dev/shm` on Linux, the temporary directory elsewhere), whose name travels with
the small pickle. `decode` maps that file, unlinks it at once, and unpickles with buffers that are slices of the
mapping: the arrays the trainer gets are backed by the shared memory itself (no copy), and the memory is returned when
the last array that uses it is freed. A file per message means no buffer is ever reused while user code may still
hold a batch.

The buffers are written with `pwrite` straight from the arrays into the file: one copy, no zero-filled reservation
first (`posix_fallocate` on tmpfs clears every page before the copy overwrites it) and no page faults of a writable
mapping in the sender. A full `/dev/shm` (small in containers) answers the write with ENOSPC, and the message falls
back to an in-band pickle; the reader maps only files written in full, so it never meets SIGBUS.
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


def _write_all(fd: int, raws: Sequence[memoryview], spans: Sequence[Tuple[int, int]], total: int) -> None:
    """Write each buffer at its offset (pwrite may write less than asked: go on until all is written)."""
    for (offset, length), raw in zip(spans, raws):
        view = raw.cast("B") if raw.format != "B" or raw.ndim != 1 else raw
        written = 0
        while written < length:
            written += os.pwrite(fd, view[written:], offset + written)
    if spans and spans[-1][0] + spans[-1][1] < total:
        os.ftruncate(fd, total)  # the alignment padding after the last buffer


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
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _write_all(fd, raws, spans, total)
            return data, name, spans
        except OSError:
            os.close(fd)
            fd = -1
            os.unlink(path)  # no room in shared memory: send it through the pipe instead
        finally:
            if fd >= 0:
                os.close(fd)
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
