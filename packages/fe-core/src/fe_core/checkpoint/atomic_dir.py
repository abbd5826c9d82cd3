"""Replace a whole directory atomically: a crash while writing never leaves a half-written directory in its place.

The new content is written into a temporary sibling (`.<name>.tmp-<random>`), every file and directory in it is
fsynced, and then it is swapped in with two renames: the old directory (if any) becomes the backup sibling
`.<name>.backup`, the temporary directory becomes `<name>`, the parent directory is fsynced, and the backup is deleted.
If the process dies between the two renames only the backup exists; `find_directory` then returns the backup so
readers still find the last complete version.

Example:
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> with atomic_directory(os.path.join(root, "ckpt")) as tmp:
    ...     with open(os.path.join(tmp, "a.txt"), "w") as f:
    ...         _ = f.write("hello")
    >>> sorted(os.listdir(root))
    ['ckpt']
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import warnings
from typing import Iterator, Optional

__all__ = ["atomic_directory", "find_directory", "backup_path", "fsync_file", "fsync_directory", "fsync_tree"]

_TMP_MARKER = ".tmp-"
_BACKUP_SUFFIX = ".backup"


def backup_path(target: str) -> str:
    """The backup sibling that `atomic_directory` moves an existing `target` to while swapping in a new one.

    Args:
        target: The directory being replaced.

    Returns:
        `<parent>/.<name>.backup`.
    """
    parent, name = os.path.split(os.path.abspath(target))
    return os.path.join(parent, f".{name}{_BACKUP_SUFFIX}")


def fsync_file(path: str) -> None:
    """Flush a file's content to disk.

    Args:
        path: The file.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(path: str) -> None:
    """Flush a directory's entries (creations, renames) to disk. A no-op where directories cannot be opened (Windows).

    Args:
        path: The directory.
    """
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: str) -> None:
    """fsync every file and directory below `root` (and `root` itself).

    Args:
        root: The directory to flush.
    """
    for directory, _, files in os.walk(root):
        for file_name in files:
            path = os.path.join(directory, file_name)
            if not os.path.islink(path):
                fsync_file(path)
        fsync_directory(directory)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _remove_stale_temporaries(parent: str, name: str) -> None:
    """Delete temporary siblings left behind by a process that died while writing `name`."""
    prefix = f".{name}{_TMP_MARKER}"
    try:
        entries = os.listdir(parent)
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.startswith(prefix):
            shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


def _make_temporary(parent: str, name: str) -> str:
    while True:
        path = os.path.join(parent, f".{name}{_TMP_MARKER}{secrets.token_hex(6)}")
        try:
            os.mkdir(path)  # unlike mkdtemp, respects the umask (a checkpoint gets the usual permissions)
            return path
        except FileExistsError:
            continue


def _swap_in(temporary: str, target: str) -> None:
    parent = os.path.dirname(target)
    backup = backup_path(target)
    moved_old = False
    try:
        if os.path.lexists(target):
            if os.path.lexists(backup):
                _remove(backup)  # a backup left by an earlier crash; `target` is complete, so it is not needed
            os.rename(target, backup)
            moved_old = True
        os.replace(temporary, target)
    except BaseException:
        if moved_old and not os.path.lexists(target):
            os.rename(backup, target)
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    fsync_directory(parent)
    if os.path.lexists(backup):
        _remove(backup)
        fsync_directory(parent)


@contextlib.contextmanager
def atomic_directory(target: str) -> Iterator[str]:
    """Write a directory atomically: yields a temporary directory to fill, then swaps it in place of `target`.

    If the body raises, the temporary directory is removed, `target` is left untouched, and the error propagates.
    Temporary siblings left by an earlier crashed write of the same `target` are removed first.

    Args:
        target: The directory to create or replace (its parent is created if needed).

    Yields:
        The path of the empty temporary directory (a sibling of `target`, on the same file system).

    Example:
        >>> import tempfile
        >>> root = tempfile.mkdtemp()
        >>> with atomic_directory(os.path.join(root, "weights")) as tmp:
        ...     open(os.path.join(tmp, "model.bin"), "wb").close()
        >>> os.listdir(os.path.join(root, "weights"))
        ['model.bin']
    """
    target = os.path.abspath(target)
    parent, name = os.path.split(target)
    if not name:
        raise ValueError(f"Cannot atomically replace {target!r}: it has no directory name")
    os.makedirs(parent, exist_ok=True)
    _remove_stale_temporaries(parent, name)
    temporary = _make_temporary(parent, name)
    try:
        yield temporary
        fsync_tree(temporary)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    _swap_in(temporary, target)


def find_directory(target: str) -> Optional[str]:
    """The directory to read for `target`: `target` itself, or its backup if a crash interrupted the swap.

    Args:
        target: The directory written by `atomic_directory`.

    Returns:
        `target` if it exists; else the backup sibling (with a warning) if that exists; else None.
    """
    if os.path.isdir(target):
        return target
    backup = backup_path(target)
    if os.path.isdir(backup):
        warnings.warn(f"{target!r} does not exist but its backup {backup!r} does (a save was interrupted while "
                      f"swapping directories); reading the backup", RuntimeWarning, stacklevel=2)
        return backup
    return None
