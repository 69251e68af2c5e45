"""`disable_jit`: run `jit`, loops and `cond` as plain Python with NumPy values, so that
`print`, `pdb` and Python's `if` work inside a step (docs/debugging.md).

While it is on (the context manager, or RUNE_JIT_DISABLE_JIT=1), a jitted function
calls its function, and a `scan`, `iterate` or `cond` whose operands are concrete runs
its steps one by one in Python: each step is called with NumPy arrays and returns
them, so its results are the NumPy interpreter's. Transformations (`grad`, `vmap`) still
trace, since they need traced values: under them the loops are staged as usual.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Iterator


from .. import options


class _State(threading.local):
    depth = 0  # open disable_jit blocks in this thread (a class default: read quickly)


_state = _State()
# disabled in every thread: RUNE_JIT_DISABLE_JIT=1, or config.update("jax_disable_jit", True)
_everywhere = os.environ.get("RUNE_JIT_DISABLE_JIT", "") not in ("", "0")
# how many disable_jit blocks are open in all threads (the setting above counting as one):
# native entries read it and take the Python path (which asks `active()`) while any is
DISABLED_ANYWHERE = ctypes.c_int32(int(_everywhere))
_lock = threading.Lock()


def active() -> bool:
    """Whether jit is disabled in this thread."""
    return _state.depth > 0 or _everywhere


@options.owns("jax_disable_jit")
def disable_everywhere(disable: bool) -> None:
    """Disable jit in every thread until told otherwise (JAX's `jax_disable_jit`)."""
    global _everywhere
    with _lock:
        if disable != _everywhere:
            DISABLED_ANYWHERE.value += 1 if disable else -1
            _everywhere = disable


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Within the block, run jitted functions, loops and `cond` in Python on NumPy
    values (as `jax.disable_jit`); `disable_jit(False)` is a block that changes nothing.

    >>> def step(c, x):
    ...     print("carry", c)           # a Python print: runs at every step
    ...     return c + x, None
    >>> with rune.disable_jit():
    ...     total = rune.jit(lambda xs: rune.scan(step, 0.0, xs)[0])(np.array([1.0, 2.0]))
    carry 0.0
    carry 1.0
    >>> float(total)
    3.0
    """
    step = 1 if disable else 0
    _state.depth += step
    with _lock:
        DISABLED_ANYWHERE.value += step
    try:
        yield
    finally:
        _state.depth -= step
        with _lock:
            DISABLED_ANYWHERE.value -= step


