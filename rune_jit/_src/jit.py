"""jit: compile a function once per signature and run it as native code.

A signature is the arguments' pytree structure, each leaf's shape, dtype and
weakness, and the values of the static arguments. Called inside a trace (a
transformation's, an outer jit's, a loop step's) a jitted function is staged into
it, so `grad(jit(f))` sees f's operations, and a jitted function may close over the
enclosing trace's values: `grad(lambda a: jit(lambda x: x * a)(2.0))`. How a call
runs is call/jitted.py.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from .call.arguments import as_argnums
from .call.jitted import Jitted, jitted


def jit(f: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Any:
    """Compile `f` to native code, once per signature: the arguments' pytree structure,
    each leaf's shape, dtype and weakness, and the values of the static arguments
    (`static_argnums` by position, `static_argnames` by name: each names the other's
    parameters too, as in JAX; static values must be hashable). Usable as `@jit` or
    `@jit(static_argnums=...)`. Inside a trace (a transformation, an outer jit, a loop
    step), a jitted function is staged into it, as JAX inlines it: `grad(jit(f))` sees
    f's operations, and f may close over the enclosing trace's traced values.

    >>> import numpy as np, rune_jit as rune
    >>> power = rune.jit(lambda x, n: x ** n, static_argnames="n")
    >>> power(np.arange(3.0), n=2).tolist()
    [0.0, 1.0, 4.0]
    """
    nums = as_argnums(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)

    def make(g: Callable) -> Jitted:
        return jitted(g, *_static_both_ways(g, nums, names))

    return make if f is None else make(f)


def _static_both_ways(f: Callable, nums: tuple[int, ...], names: tuple[str, ...]
                      ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Static positions and names, each completed from the other by f's signature."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):  # a builtin, say: no signature to read
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
    by_name = {n: i for i, n in enumerate(positional)}
    all_nums = tuple(sorted(set(nums) | {by_name[n] for n in names if n in by_name}))
    all_names = tuple(sorted(set(names) | {positional[i] for i in nums
                                            if 0 <= i < len(positional)}))
    return all_nums, all_names
