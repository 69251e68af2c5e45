"""Memory for large results: recycled between calls, and faulted in ahead of the program.

A fresh multi-megabyte array costs page faults on first touch: for 8 MB on these
machines about 5 ms in 4 KB pages, 1 ms as NumPy allocates it (huge pages where they
fit). An array from the pool is backed by memory an earlier, dropped result used, and
goes back when it is dropped. Fresh memory (a program's first calls) starts on a huge
page boundary, so that it is huge pages throughout, and a helper thread has the kernel
fault it in (Linux's MADV_POPULATE_WRITE) while the program writes it from the start:
the program rarely waits for a page (W1's first call: about 1 ms less of 4.8).
"""

from __future__ import annotations

import ctypes
import sys
import _thread
from functools import partial
from typing import Callable

import numpy as np

from ....ir import Type

MIN_BYTES = 1 << 20
HUGE_PAGE = 1 << 21
MADV_POPULATE_WRITE = 23  # Linux 5.14; older kernels refuse it, and nothing is lost


class OutputPool:
    KEEP = 4  # free blocks kept per size (an attribute: results die as the interpreter
    # exits, when module globals are gone)

    def __init__(self):
        self.free: dict[int, list] = {}

    def allocator(self, t: Type) -> Callable[[], np.ndarray]:
        """What makes a new array of type `t` (decided once: calls are on the hot path)."""
        if t.nbytes < MIN_BYTES:
            return partial(np.empty, t.shape, t.dtype)
        return partial(self.lease, t.shape, t.dtype, t.nbytes)

    def prepare(self, t: Type) -> None:
        """Have fresh memory on its way for a first result of type `t`, if none is free
        (called once its program is loaded, so that faulting it in overlaps the rest of
        the first call; not before: loading code maps memory, which would wait for it)."""
        if t.nbytes >= MIN_BYTES and not self.free.get(t.nbytes):
            self.give_back(*_fresh(t.nbytes), t.nbytes)

    def lease(self, shape: tuple, dtype: np.dtype, nbytes: int) -> np.ndarray:
        blocks = self.free.setdefault(nbytes, [])
        try:
            raw, address = blocks.pop()
        except IndexError:
            raw, address = _fresh(nbytes)
        return np.asarray(_Lease(self, raw, address, nbytes, shape, dtype))

    def give_back(self, raw: np.ndarray, address: int, nbytes: int) -> None:
        blocks = self.free.setdefault(nbytes, [])
        if len(blocks) < self.KEEP:
            blocks.append((raw, address))


class _Lease:
    """The base of a pooled array: NumPy keeps it alive as long as the array, a view or
    a slice of it lives; when it goes, the memory goes back to the pool."""

    __slots__ = ("pool", "raw", "address", "nbytes", "__array_interface__")

    def __init__(self, pool, raw, address, nbytes, shape, dtype):
        self.pool, self.raw, self.address, self.nbytes = pool, raw, address, nbytes
        self.__array_interface__ = {"shape": tuple(shape), "typestr": dtype.str,
                                    "data": (address, False), "version": 3}

    def __del__(self):
        self.pool.give_back(self.raw, self.address, self.nbytes)


def _fresh(nbytes: int) -> tuple[np.ndarray, int]:
    """(new memory, the address of its `nbytes` on a huge page boundary); the pages
    before that address and after its `nbytes` are never touched, so never backed."""
    raw = np.empty(nbytes + HUGE_PAGE, np.uint8)
    address = -(-raw.ctypes.data // HUGE_PAGE) * HUGE_PAGE
    if _madvise is not None:  # not threading.Thread: its start waits for the thread
        try:
            _thread.start_new_thread(_populate, (_madvise, raw, address, nbytes))
        except RuntimeError:  # no thread to spare: the program faults the pages itself
            pass
    return raw, address


def _populate(madvise: Callable, raw: np.ndarray, address: int, nbytes: int,
              advice: int = MADV_POPULATE_WRITE) -> int:
    """Fault in the pages as writes would, keeping what is already written there; the
    thread holds `raw`, so the memory stays mapped until it is done, and reads no
    module global (they are None as the interpreter exits). -> madvise's 0 or -1."""
    return madvise(address, nbytes, advice)


def _libc_madvise():
    if not sys.platform.startswith("linux"):
        return None
    madvise = ctypes.CDLL(None).madvise  # CDLL: the call releases the GIL
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


_madvise = _libc_madvise()
POOL = OutputPool()
