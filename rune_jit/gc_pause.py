"""Python's cyclic garbage collector held off while a program is traced and compiled.

Tracing and lowering make many objects that live as long as the compile (equations,
LLVM IR values) and little cyclic garbage, yet each collection of the oldest generation
walks all of them: their number made compile time grow faster than the program (issue
18's compile workload, a scan step of k = 3000 operations: collections were a third of
lowering's time, and lowering's growth exponent was 1.2 rather than 1). The collector
runs again, as before, when the outermost pause ends.
"""

from __future__ import annotations

import gc
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from .forks import renew_in_child


class _Pauses:
    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0  # pauses running (several threads may compile at once)
        self.resume = False  # whether the collector ran before the first of them


def _fresh() -> _Pauses:
    """The state of a process that has no pause running: a child forked during one
    (whose pausing thread it does not have) gets its collector back."""
    old = getattr(sys.modules[__name__], "_pauses", None)
    if old is not None and old.depth and old.resume:
        gc.enable()
    return _Pauses()


_pauses = renew_in_child(sys.modules[__name__], "_pauses", _fresh)


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic garbage collection while this lasts (in any thread).

    >>> import gc
    >>> with paused():
    ...     gc.isenabled()
    False
    """
    p = _pauses
    with p.lock:
        if p.depth == 0:
            p.resume = gc.isenabled()
            gc.disable()
        p.depth += 1
    try:
        yield
    finally:
        with p.lock:
            p.depth -= 1
            if p.depth == 0 and p.resume:
                gc.enable()
