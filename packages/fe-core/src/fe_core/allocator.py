"""Keeping freed memory in the process while training, on glibc's malloc.

A training step frees and allocates the same large buffers (activations, gradients, batches) every step. glibc's
malloc serves blocks above a threshold with `mmap` and hands free memory at the top of its heap back to the operating
system above another threshold, adjusting both as it goes. Depending on how the heap happens to be laid out, it then
returns the step's buffers to the system at every step and every step faults them back in, page by page: measured on
a CPU LeNet (batch 32), 20,000-30,000 page faults per 16-step epoch and 20-30% of the run's time, differing from one
run to the next. Frameworks leave this to the user (`MALLOC_*` environment variables, or jemalloc/tcmalloc).

While `Estimator.fit` or `Estimator.test` runs, fe asks glibc to keep freed memory for reuse instead: blocks up to
32 MiB (the ceiling of glibc's own adjustment) come from the heap, and the heap is not trimmed. When the run ends, fe
gives the free memory back with `malloc_trim(0)`. The settings stay for the rest of the process (glibc cannot go back
to adjusting them itself), which only means later frees are returned at the next `malloc_trim`, not sooner.

Nothing is changed when fe does not run on glibc (macOS, Windows, musl), when the user chose for themselves
(`MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TOP_PAD_` or `MALLOC_MMAP_MAX_` set, or jemalloc,
tcmalloc or mimalloc preloaded), or when `FE_KEEP_FREED_MEMORY=0`.
"""
from __future__ import annotations

import ctypes
import os
import platform
from typing import Any, Optional

__all__ = ["keep_freed_memory", "release_freed_memory", "TRIM_THRESHOLD", "MMAP_THRESHOLD"]

#: Free memory glibc may keep at the top of its heap: the largest value `mallopt` accepts (an int).
TRIM_THRESHOLD = 2**31 - 1
#: Blocks below this size come from the heap (reused) rather than from `mmap` (returned on free).
MMAP_THRESHOLD = 32 * 1024 * 1024

_M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
_OTHER_ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc")

_libc: Optional[Any] = None  # glibc, once fe has configured it


def _leave_alone() -> bool:
    """Whether fe must not change the allocator here."""
    if os.environ.get("FE_KEEP_FREED_MEMORY", "1").strip().lower() in ("0", "false", "no", "off"):
        return True  # switched off
    if any(name in os.environ for name in _USER_SETTINGS):
        return True  # the user tuned glibc's malloc themselves
    if any(name in os.environ.get("LD_PRELOAD", "").lower() for name in _OTHER_ALLOCATORS):
        return True  # another allocator serves malloc
    return platform.system() != "Linux" or platform.libc_ver()[0] != "glibc"


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for reuse (see the module docstring); once per process.

    Returns:
        Whether the settings are in force (False where fe leaves the allocator alone).

    Example:
        >>> keep_freed_memory() in (True, False)
        True
    """
    global _libc  # pylint: disable=global-statement
    if _libc is not None:
        return True
    if _leave_alone():
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if not mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) or not mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        return False
    libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    _libc = libc
    return True


def release_freed_memory() -> None:
    """Give the free memory fe asked glibc to keep back to the operating system (`malloc_trim(0)`)."""
    if _libc is not None:
        _libc.malloc_trim(0)
