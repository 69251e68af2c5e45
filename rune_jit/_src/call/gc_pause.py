"""Python's full garbage collections held off while a program is traced and compiled.

Tracing and lowering make many objects that live as long as the compile (equations,
LLVM IR values), and each collection of the oldest generation walks all of them: their
number made compile time grow faster than the program (issue 18's compile workload, a
scan step of k = 3000 operations: tracing its gradient took 3.1 s rather than 1.3, and
lowering grew as k^1.2). The young generations are still collected as usual, so no
pile of garbage is left for the code that runs next; the oldest is collected again, as
before, when the outermost pause ends.
"""

from __future__ import annotations

import gc
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from .forks import renew_in_child

NEVER = 1 << 30  # collections of the middle generation before one of the oldest


class _Pauses:
    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0  # pauses running (several threads may compile at once)
        self.threshold = 0  # the oldest generation's threshold before the first of them


def _fresh() -> _Pauses:
    """The state of a process that has no pause running: a child forked during one
    (whose pausing thread it does not have) gets its threshold back."""
    old = getattr(sys.modules[__name__], "_pauses", None)
    if old is not None and old.depth:
        _set_oldest(old.threshold)
    return _Pauses()


def _set_oldest(threshold: int) -> None:
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, threshold)


_pauses = renew_in_child(sys.modules[__name__], "_pauses", _fresh)


@contextmanager
def paused() -> Iterator[None]:
    """No collection of the oldest generation while this lasts (in any thread).

    >>> import gc
    >>> with paused():
    ...     gc.get_threshold()[2] == NEVER
    True
    """
    p = _pauses
    with p.lock:
        if p.depth == 0:
            p.threshold = gc.get_threshold()[2]
            _set_oldest(NEVER)
        p.depth += 1
    try:
        yield
    finally:
        with p.lock:
            p.depth -= 1
            if p.depth == 0:
                _set_oldest(p.threshold)
