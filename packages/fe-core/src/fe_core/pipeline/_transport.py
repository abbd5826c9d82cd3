"""Moving task results between processes: pickle protocol 5 with the large buffers in a shared-memory file.

`encode` pickles an object with protocol 5, collecting the buffers of its numpy arrays out of band. Below a threshold
the object is pickled in band (small batches: one pipe message is cheapest). Above it, the buffers are written once
into a fresh file in shared memory (`/dev/shm` on Linux, the temporary directory elsewhere), whose name travels with
the small pickle. `decode` maps that file, unlinks it at once, and unpickles with buffers that are slices of the
mapping: the arrays the trainer gets are backed by the shared memory itself (no copy), and the memory is returned when
the last array that uses it is freed. A file per message means no buffer is ever reused while user code may still
hold a batch.

Workers send through a `SegmentRing` instead: a few segments per worker, created once, mapped once on each side, and
written again only when the trainer's `SegmentReader` has seen every array decoded from the segment freed (a
finalizer on the array they all view) and told the worker so. That saves, per 4 KiB of every batch, a newly zeroed
page in the worker and a page fault plus an unmapping in the trainer; when every segment is still held (user code
keeping batches), results go through new files as above. A result larger than every free segment (results that grow,
with per-batch padding) replaces the smallest free one, and the receiver is told to unmap it.

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
import weakref
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["shared_directory", "encode", "decode", "discard", "remove_files", "SegmentRing", "SegmentReader"]

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


def _layout(value: Any) -> Tuple[bytes, List[memoryview], List[Tuple[int, int]], int]:
    """Pickle `value` with its buffers out of band: (pickle bytes, the buffers, their (offset, length), total bytes)."""
    buffers: List[pickle.PickleBuffer] = []
    data = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    spans = []
    total = 0
    for raw in raws:
        spans.append((total, raw.nbytes))
        total += (raw.nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    return data, raws, spans, total


def _to_file(directory: str, name: str, raws: Sequence[memoryview], spans: Sequence[Tuple[int, int]],
             total: int) -> bool:
    """Write the buffers into the new shared file `name`; False (and no file) when shared memory is full."""
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_all(fd, raws, spans, total)
        return True
    except OSError:
        os.close(fd)
        fd = -1
        os.unlink(path)  # no room in shared memory: send it through the pipe instead
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def encode(value: Any, directory: str, name: str, threshold: int) -> Message:
    """Pickle `value`; put its out-of-band buffers in the shared file `name` when they total `threshold` bytes or more.

    Returns:
        (pickle bytes, file name or None, the (offset, length) of each buffer in the file or None).
    """
    data, raws, spans, total = _layout(value)
    if not raws:
        return data, None, None
    if total >= threshold > 0 and _to_file(directory, name, raws, spans, total):
        return data, name, spans
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


class _Segment:
    def __init__(self, name: str, size: int, mapping: mmap.mmap) -> None:
        self.name, self.size, self.mapping = name, size, mapping


class SegmentRing:
    """A sender's reused shared-memory segments: results are copied into a segment the receiver has released.

    A new file per message costs, per 4 KiB page, a fresh zeroed page of shared memory on the sender's side and a page
    fault and an unmapping on the receiver's. A segment is created once (its pages reserved with `posix_fallocate`, so
    a full `/dev/shm` is met there and never as SIGBUS), stays mapped on both sides, and is written again only after
    the receiver said that every array of the message it held is gone (`release`). When no released segment is large
    enough and `count` exist, or a result is larger than `largest`, the message goes through a new file as `encode`
    does.

    Args:
        directory: The shared-memory directory.
        prefix: Segment file names start with it (a worker's removal of its files on exit covers them).
        count: The most segments (results the receiver may hold at once without falling back to files).
        largest: Larger results always go through a new file.
    """

    def __init__(self, directory: str, prefix: str, count: int, largest: int) -> None:
        self.directory, self.prefix, self.count, self.largest = directory, prefix, count, largest
        self.free: List[_Segment] = []
        self.busy: dict = {}
        self.names = 0
        self.retired: List[str] = []  # segments removed since the last message, for the receiver to unmap

    def release(self, names: Sequence[str]) -> None:
        """The receiver dropped the messages in these segments: they may be written again."""
        for name in names:
            segment = self.busy.pop(name, None)
            if segment is not None:
                self.free.append(segment)

    def _take(self, total: int) -> Optional[_Segment]:
        fitting = [segment for segment in self.free if segment.size >= total]
        if fitting:
            segment = min(fitting, key=lambda candidate: candidate.size)
            self.free.remove(segment)
            return segment
        if total > self.largest:
            return None
        if len(self.free) + len(self.busy) >= self.count:
            if not self.free:
                return None
            # Every free segment is too small (results grew: per-batch padding, a small first batch): replace the
            # smallest, or the results would go through new files for the rest of the pool's life.
            small = min(self.free, key=lambda candidate: candidate.size)
            self.free.remove(small)
            small.mapping.close()
            try:
                os.unlink(os.path.join(self.directory, small.name))
            except OSError:
                pass
            self.retired.append(small.name)
        name = f"{self.prefix}s{self.names}"
        self.names += 1
        path = os.path.join(self.directory, name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fallocate = getattr(os, "posix_fallocate", None)
            if fallocate is not None:
                fallocate(fd, 0, total)
            else:
                os.ftruncate(fd, total)
            mapping = mmap.mmap(fd, total)
        except OSError:
            os.unlink(path)
            return None
        finally:
            os.close(fd)
        return _Segment(name, total, mapping)

    def encode(self, value: Any, name: str, threshold: int) -> Message:
        """As `encode(value, directory, name, threshold)`, in a released segment when one fits.

        Returns:
            `encode`'s message, with a fourth item when the buffers are in a segment (to be released): the names of
            the segments removed since the last such message (the receiver drops its mappings of them).
        """
        data, raws, spans, total = _layout(value)
        if not raws:
            return data, None, None
        if total >= threshold > 0:
            segment = self._take(total)
            if segment is not None:
                mapping = segment.mapping
                for (offset, length), raw in zip(spans, raws):
                    mapping[offset:offset + length] = raw
                self.busy[segment.name] = segment
                retired, self.retired = tuple(self.retired), []
                return data, segment.name, spans, retired  # type: ignore[return-value]
            if _to_file(self.directory, name, raws, spans, total):
                return data, name, spans
        return pickle.dumps(value, protocol=5), None, None


class SegmentReader:
    """The receiver's side of `SegmentRing`: maps each segment once and says when a message's arrays are all gone.

    Args:
        directory: The shared-memory directory.
        released: Called with a segment's name once nothing uses the message decoded from it any more (it may run
            whenever the last array is freed: it should only record the name).
    """

    def __init__(self, directory: str, released: Any) -> None:
        self.directory, self.released = directory, released
        self.mappings: dict = {}
        self.active = True

    def _release(self, name: str) -> None:
        if self.active:  # a reader closed with its pool: the segment's sender is gone
            self.released(name)

    def close(self) -> None:
        """Forget the senders: releases of messages still held are dropped (the mappings live on in their arrays)."""
        self.active = False
        self.mappings = {}

    def decode(self, message: Message) -> Any:
        """Unpickle a message; arrays from a segment are views of it, and the segment is released when they die."""
        if len(message) < 4:
            return decode(message, self.directory)
        data, name, spans = message[:3]
        self._forget(message)
        mapping = self.mappings.get(name)
        if mapping is None:
            fd = os.open(os.path.join(self.directory, name), os.O_RDWR)
            try:
                mapping = mmap.mmap(fd, os.fstat(fd).st_size)
            finally:
                os.close(fd)
            self.mappings[name] = mapping
        holder = np.frombuffer(mapping, dtype=np.uint8)  # every array of the message is a view of it
        weakref.finalize(holder, self._release, name)
        return pickle.loads(data, buffers=[holder[offset:offset + length] for offset, length in spans or ()])

    def _forget(self, message: Message) -> None:
        """Unmap the segments the sender removed (arrays still using one keep its mapping alive)."""
        for name in message[3]:  # type: ignore[misc]
            self.mappings.pop(name, None)

    def discard(self, message: Message) -> None:
        """Drop a message that will not be decoded: its segment is released, or its file removed."""
        if len(message) >= 4:
            self._forget(message)
            self._release(message[1])
        else:
            discard(message, self.directory)


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
