"""A child that os.fork makes while another thread traces, compiles or runs compiled code
can trace, compile and call code too.

A child has only the thread that forked. A lock another thread held at that moment stays
held in the child forever, so every lock rune_jit takes is made again in the child
(`renew_in_child`). LLVM's own state must also be consistent in the child: a fork waits
until no thread is inside an LLVM call (llvmlite makes one call at a time, under its
lock, which the fork holds while it happens).

Some work must not be caught half-way by a fork, and a fork waits for it
(`fork_waits`): importing the CPU backend (half a second; the thread importing holds the
import system's lock of each module it imports, which the child would wait for forever
the first time it imported one), and reading LLVM's output through file descriptors 1
and 2 redirected to a temporary file (target_cpu.py: the child would start with them
redirected, holding the standard library's lock of its first temporary directory).

The same holds at the process's end: LLVM's global objects are destroyed as the process
exits, and a daemon thread still inside an LLVM call then reads freed memory (a
segfault after the program's last line). As the interpreter exits, rune_jit waits for
the call under way and keeps LLVM's lock, so that no other thread enters LLVM again.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Any, Callable

# owner -> {attribute: what makes a fresh one}
_renewed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def renew_in_child(owner: Any, name: str, make: Callable[[], Any] = threading.Lock) -> Any:
    """Set `owner.name = make()`, and again in every child a fork makes; -> the value."""
    value = make()
    setattr(owner, name, value)
    _renewed.setdefault(owner, {})[name] = make
    return value


def _llvm_lock():
    """llvmlite's lock around every call into LLVM, if this llvmlite has one."""
    import sys

    ffi = sys.modules.get("llvmlite.binding.ffi")  # not imported: nothing to wait for
    return getattr(getattr(getattr(ffi, "lib", None), "_lock", None), "_lock", None)


_held: list = []

# work a fork waits for, done under this lock (reentrant: importing the backend reads
# LLVM's output); a fork takes it before LLVM's, as that work does
fork_waits = threading.RLock()


def _before() -> None:
    fork_waits.acquire()
    _held.append(fork_waits)
    lock = _llvm_lock()  # now: the work waited for may have loaded LLVM
    if lock is not None:
        lock.acquire()
        _held.append(lock)


def _after_in_parent() -> None:
    while _held:
        _held.pop().release()


def _after_in_child() -> None:
    _after_in_parent()
    for owner, names in list(_renewed.items()):
        for name, make in names.items():
            setattr(owner, name, make())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_after_in_parent,
                        after_in_child=_after_in_child)


def hold_llvm_until_exit() -> None:
    """Wait until no other thread is inside LLVM, and keep it so (atexit)."""
    lock = _llvm_lock()
    if lock is not None:
        lock.acquire()  # never released: the process is ending


atexit.register(hold_llvm_until_exit)
