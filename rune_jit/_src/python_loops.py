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
from typing import Any, Callable, Iterator

import numpy as np

from . import options, tree
from .errors import IterateError, iterate_message
from .trace import Tracer, current


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


def concrete(*values: Any) -> bool:
    """Whether disable_jit is on, nothing is being traced (a step may read traced values
    it captures) and no leaf of `values` is traced."""
    return active() and current() is None and not any(
        isinstance(x, Tracer) for x in tree.flatten(values)[0])


def _checked_carry(who: str, init: Any, out: Any) -> Any:
    """The step's carry as arrays of init's structure, shapes and dtypes (a Python
    number in init takes the dtype the step gives it), as the staged loops check it."""
    from .arguments import leaf_type
    from .ops.loops import check_carry, promotable

    init_leaves, init_tree = tree.flatten(init)
    out_leaves, out_tree = tree.flatten(out)
    types = [leaf_type(x)[0] for x in init_leaves]
    weak = [leaf_type(x)[1] for x in init_leaves]
    out_types = [leaf_type(x)[0] for x in out_leaves]
    if out_tree == init_tree and promotable(types, weak, out_types):
        types = out_types
    check_carry(who, init_tree, types, out_tree, out_types)
    return tree.unflatten(out_tree, [np.asarray(x, t.dtype) for x, t in zip(out_leaves, types)])


def scan(f: Callable, init: Any, xs: Any, length: int, reverse: bool) -> tuple[Any, Any]:
    """`scan`'s meaning, step by step in Python (at least one step: with none, the
    staged scan says what its ys are)."""
    carry, ys = init, []
    for i in (reversed(range(length)) if reverse else range(length)):
        x = None if xs is None else tree.tree_map(lambda a, i=i: np.asarray(a)[i], xs)
        out = f(carry, x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("scan: f must return a pair (carry, y)")
        carry = _checked_carry("scan", carry, out[0])
        ys.append(out[1])
    if reverse:
        ys.reverse()
    return carry, tree.tree_map(lambda *rows: np.stack([np.asarray(r) for r in rows]), *ys)


def iterate(step: Callable, init: Any, until: Callable, max_steps: int) -> Any:
    """`iterate`'s meaning, step by step in Python."""
    carry, n = init, 0
    while not bool(until(carry)):
        if n == max_steps:
            raise IterateError(iterate_message(max_steps, None))
        carry, n = _checked_carry("iterate", carry, step(carry)), n + 1
    return carry
