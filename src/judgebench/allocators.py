"""The memory allocators a big report runs on: set once by the process owner (the CLI's `main`).

Why: a million-judgment report allocates and frees many arrays of tens of MB (pyarrow's parse,
pandas' arrow strings, the bootstrap's blocks of resampling counts). With pyarrow's default pool
(mimalloc) and glibc's defaults (an array over 32 MB is an mmap of its own, unmapped when freed),
each of them is paged in afresh: at 23 languages that was 5 s of system time and a 23-language
report's parse took 8.3 s where the same parse on jemalloc took 4.4 s. jemalloc keeps and reuses
what pyarrow frees; glibc's mmap threshold raised keeps numpy's big arrays in its heap for reuse.

Only what the user has not set: `ARROW_DEFAULT_MEMORY_POOL` and `MALLOC_MMAP_THRESHOLD_` set in the
environment win. Nothing here imports pyarrow: the pool is chosen through the variable pyarrow reads
when it first allocates (the CLI sets it first thing; a process that has pyarrow already gets the
pool set directly). Linux only, where pyarrow's wheels ship jemalloc and the C library is glibc;
elsewhere nothing changes.
"""

from __future__ import annotations

import contextlib
import os
import sys

ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"
GLIBC_MMAP = "MALLOC_MMAP_THRESHOLD_"
# glibc mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# arrays below this come from glibc's heap and are reused there; freed memory below this at the top
# of the heap stays mapped (a report's peak is what it is; it is not reached twice)
_HEAP_BYTES = 1 << 30


def tune_allocators() -> list[str]:
    """Set the allocators for columnar work where the user has not; returns what it set (e.g.
    ["arrow pool: jemalloc", "glibc mmap threshold: 1 GiB"]), [] where nothing applies."""
    if not sys.platform.startswith("linux"):
        return []
    done: list[str] = []
    if ARROW_POOL not in os.environ:
        os.environ[ARROW_POOL] = "jemalloc"  # read by pyarrow at its first allocation (and by children)
        if "pyarrow" in sys.modules:  # a library caller that has pyarrow already: its pool, set now
            _set_arrow_jemalloc()
        done.append("arrow pool: jemalloc")
    if GLIBC_MMAP not in os.environ and _glibc_mallopt(_M_MMAP_THRESHOLD, _HEAP_BYTES):
        _glibc_mallopt(_M_TRIM_THRESHOLD, _HEAP_BYTES)
        done.append("glibc mmap threshold: 1 GiB")
    return done


def _set_arrow_jemalloc() -> None:
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):  # built without jemalloc: its own default stays
        pa.set_memory_pool(pa.jemalloc_memory_pool())


def _glibc_mallopt(parameter: int, value: int) -> bool:
    """glibc's mallopt, False where the C library is not glibc (musl has none) or refuses it."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(ctypes.c_int(parameter), ctypes.c_int(value)))
    except (OSError, AttributeError):
        return False
