"""Seeing values inside staged and compiled code: `debug.print` and `debug.callback`
(docs/debugging.md). Both run when the program runs, in program order: each step of a
loop prints; under vmap, once per lane; under grad, in the forward pass."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

from .control_flow import debug_callback

__all__ = ["callback", "print"]


def callback(fn: Callable, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Call `fn(*args, **kwargs)` with the arguments' values when the program runs (for
    its effects: its result is dropped). An exception it raises leaves the compiled call
    as itself. Callbacks always run in program order, so `ordered` (JAX's) changes nothing.

    >>> seen = []
    >>> rune.jit(lambda x: (rune.debug.callback(seen.append, x * 2), x)[1])(np.arange(2.0))
    array([0., 1.])
    >>> seen
    [array([0., 2.])]
    """
    debug_callback(fn, *args, **kwargs)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print `fmt.format(*args, **kwargs)` with the arguments' values when the program
    runs, to `sys.stdout` as it is then (so notebooks and pytest see it); jax.debug.print's
    signature.

    >>> def step(c, x):
    ...     rune.debug.print("c = {c}, x = {x}", c=c, x=x)
    ...     return c + x, None
    >>> total = rune.jit(lambda xs: rune.scan(step, 0.0, xs)[0])(np.array([1.0, 2.0]))
    c = 0.0, x = 1.0
    c = 1.0, x = 2.0
    """
    debug_callback(functools.partial(_write, fmt), *args, **kwargs)


def _write(fmt: str, *args: Any, **kwargs: Any) -> None:
    sys.stdout.write(fmt.format(*args, **kwargs) + "\n")
