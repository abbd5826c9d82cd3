"""Files whose size and sha256 come from the bytes their writer meant to write, never from reading them back.

A checkpoint's manifest records a sha256 for every file so that damage is detected before anything is loaded. If
that digest were computed by re-reading a file after it was written, damage done in between (a faulty disk, a
concurrent writer truncating, flipping bytes, zeroing pages or replacing the file) would be hashed as if it were
the content and then load silently. So writers hash the bytes on their way to the file: `HashingWriter` wraps an open
binary file, and `write_hashed_file` writes a whole file through one (atomically: temporary sibling, fsync, rename)
and returns a `WrittenFile`, a file name that carries the size and sha256 of what was written.

A backend's `save_model` may return `WrittenFile`s instead of plain names (they are strings, so callers that expect
names keep working); `write_checkpoint` then puts those digests into the manifest and hashes only the files whose
writer reported nothing by reading them back.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "blob.bin")
    >>> written = write_hashed_file(path, lambda file: file.write(b"hello"))
    >>> written == path, written.size, written.sha256[:16]
    (True, 5, '2cf24dba5fb0a30e')
"""
from __future__ import annotations

import hashlib
import io
import os
import secrets
from typing import Any, BinaryIO, Callable, Tuple

__all__ = ["WrittenFile", "HashingWriter", "write_hashed_file", "file_sha256"]

_CHUNK = 1 << 20
_HEX_DIGITS = frozenset("0123456789abcdef")


class WrittenFile(str):
    """A file name (or path) that also carries the size and sha256 of the bytes its writer wrote.

    It is a `str` equal to the name, so it can be returned wherever file names are expected (for example from
    `Backend.save_model`); a checkpoint's manifest then records these digests instead of re-reading the file.

    Args:
        name: The file's name or path.
        size: How many bytes were written.
        sha256: The hex sha256 of those bytes (64 lowercase hex digits).

    Raises:
        ValueError: If `size` is not a non-negative integer or `sha256` is not a hex sha256.

    Example:
        >>> import hashlib
        >>> f = WrittenFile("model.pt", 3, hashlib.sha256(b"abc").hexdigest())
        >>> f == "model.pt", f.size, f.renamed("sub/model.pt").sha256 == f.sha256
        (True, 3, True)
    """

    size: int
    sha256: str

    def __new__(cls, name: str, size: int, sha256: str) -> "WrittenFile":
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"WrittenFile {name!r}: size should be a non-negative integer, got {size!r}")
        if not isinstance(sha256, str) or len(sha256) != 64 or not set(sha256) <= _HEX_DIGITS:
            raise ValueError(f"WrittenFile {name!r}: sha256 should be 64 lowercase hex digits, got {sha256!r:.80}")
        written = super().__new__(cls, name)
        written.size = size
        written.sha256 = sha256
        return written

    def renamed(self, name: str) -> "WrittenFile":
        """The same digest under another name (for example the path relative to a checkpoint directory).

        Args:
            name: The new name.

        Returns:
            A WrittenFile named `name` with this one's size and sha256.
        """
        return WrittenFile(name, self.size, self.sha256)

    def __reduce__(self) -> Tuple[Any, ...]:
        return WrittenFile, (str(self), self.size, self.sha256)


class HashingWriter(io.RawIOBase):
    """A write-only, non-seekable view of an open binary file that hashes every byte on its way to the file.

    Writers that would seek back to patch what they already wrote (zip archives) see a stream that cannot seek and
    write sequentially instead (`zipfile` then uses data descriptors), so the digest is exactly that of the file.
    Closing the writer does not close the underlying file.

    Args:
        file: A binary file open for writing.

    Example:
        >>> buffer = io.BytesIO()
        >>> writer = HashingWriter(buffer)
        >>> writer.write(b"abc"), writer.size, writer.hexdigest() == hashlib.sha256(b"abc").hexdigest()
        (3, 3, True)
    """

    def __init__(self, file: BinaryIO) -> None:
        super().__init__()
        self._file = file
        self._digest = hashlib.sha256()
        self._size = 0

    @property
    def size(self) -> int:
        """How many bytes have been written."""
        return self._size

    def hexdigest(self) -> str:
        """The hex sha256 of everything written so far."""
        return self._digest.hexdigest()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        raise io.UnsupportedOperation("HashingWriter cannot seek: the digest covers bytes in the order written")

    def write(self, data: Any) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        total = 0
        while total < len(view):  # a raw file may write only part: hash exactly what reached it
            written = self._file.write(view[total:])
            if written is None:
                raise BlockingIOError("HashingWriter needs a blocking file: the underlying file took no bytes")
            self._digest.update(view[total:total + written])
            total += written
        self._size += total
        return total

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self.closed and not self._file.closed:
            self._file.flush()
        super().close()


def _open_temporary(path: str) -> Tuple[str, int]:
    """Create a new temporary sibling of `path` (permissions from the umask, unlike mkstemp's 0600)."""
    directory, name = os.path.split(os.path.abspath(path))
    while True:
        temporary = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return temporary, os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                                      0o666)
        except FileExistsError:
            continue


def write_hashed_file(path: str, write: Callable[[HashingWriter], Any]) -> WrittenFile:
    """Write a file atomically and durably, hashing its bytes as they are written.

    `write` receives a `HashingWriter` over a temporary sibling of `path`; when it returns, the file is flushed,
    fsynced and renamed to `path`. If `write` raises, the temporary file is removed and `path` is left as it was.

    Args:
        path: The file to create or replace (its directory must exist).
        write: Writes the content, e.g. `lambda file: torch.save(obj, file)` or `lambda file: np.savez(file, **a)`.

    Returns:
        `path` as a WrittenFile with the size and sha256 of the bytes `write` wrote.

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "state.json")
        >>> write_hashed_file(path, lambda file: file.write(b"{}")).size
        2
    """
    temporary, handle = _open_temporary(path)
    try:
        with os.fdopen(handle, "wb") as file:
            writer = HashingWriter(file)
            write(writer)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.remove(temporary)
        raise
    return WrittenFile(path, writer.size, writer.hexdigest())


def file_sha256(path: str) -> str:
    """The hex sha256 of a file's current content, read back from the disk.

    Args:
        path: The file.

    Returns:
        64 hex digits.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
