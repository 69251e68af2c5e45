"""JAX's loop spellings, over rune_jit's loops: fori_loop, while_loop, switch, map and
associative_scan. Programs written for `jax.lax` port by renaming `lax.` to `rune.`.

    fori_loop(lo, hi, body, init)   == for i in range(lo, hi): init = body(i, init)
    while_loop(cond, body, init)    == while cond(init): init = body(init)
    switch(i, branches, *ops)       == branches[clip(i, 0, len - 1)](*ops)
    map(f, xs)                      == stack([f(x) for x in xs])
    associative_scan(fn, xs)        == [xs[0], fn(xs[0], xs[1]), fn(fn(...), xs[2]), ...]
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from .. import tree
from ..call.arguments import leaf_type
from ..ir import UNBOUNDED
from ..ops.checkpointed import checked_checkpoints
from ..trace import Tracer, type_of_value
from ..tracebacks import api_boundary
from .cond import cond
from .iterate import iterate
from .scan import scan


def _is_static_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_index(x: Any, who: str, what: str) -> None:
    t = leaf_type(x)[0] if not isinstance(x, (bool, np.bool_)) else None
    if t is None or t.dtype.kind not in "iu" or t.shape != ():
        shown = "a bool" if t is None else str(t)
        raise TypeError(f"{who}: {what} must be an integer scalar, got {shown}")


@api_boundary
def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """`body_fun(i, val) -> val` for i from `lower` to `upper`, as `lax.fori_loop`. Static
    bounds make a `scan` (reverse-differentiable, the index a row of its xs); traced
    bounds a `while_loop` (forward-differentiable; reverse mode needs static bounds).

    >>> import rune_jit as rune
    >>> int(rune.fori_loop(0, 5, lambda i, total: total + i, 0))
    10
    """
    _check_index(lower, "fori_loop", "lower")
    _check_index(upper, "fori_loop", "upper")
    if _is_static_int(lower) and _is_static_int(upper):
        indices = np.arange(int(lower), builtins.max(int(lower), int(upper)))
        return scan(lambda c, i: (body_fun(i, c), None), init_val, indices, unroll=unroll)[0]
    out = while_loop(lambda c: c[0] < upper, lambda c: (c[0] + 1, body_fun(c[0], c[1])),
                     (lower, init_val))
    return out[1]


@api_boundary
def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any, *,
               max_steps: int | None = None, checkpoints: int | str = "all") -> Any:
    """`while cond_fun(val): val = body_fun(val)`, as `lax.while_loop`. It is `iterate`
    with the test negated: under `vmap` each lane stops on its own. Unlike JAX's, reverse
    mode differentiates it: the tape grows with the steps taken. With `max_steps`, a loop
    still running after `max_steps` steps raises IterateError; without, there is no step
    limit (docs/loop-spellings.md says where a tape of unknown length cannot go).
    `checkpoints=k` keeps at most k carries for reverse mode instead of a tape, as in
    `iterate`.

    >>> import rune_jit as rune
    >>> int(rune.while_loop(lambda n: n < 100, lambda n: n * 2, 1))
    128
    """

    checked_checkpoints(checkpoints, "while_loop")

    def until(val):
        from ..numpy import logical_not

        return logical_not(cond_fun(val))

    return iterate(body_fun, init_val, until=until,
                   max_steps=UNBOUNDED if max_steps is None else max_steps,
                   checkpoints=checkpoints)


@api_boundary
def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """`branches[index](*operands)`, the index clamped into range as in `lax.switch`;
    under `vmap` with a batched index, every branch runs and each lane takes its own.

    >>> import numpy as np, rune_jit as rune
    >>> float(rune.switch(5, [lambda x: x + 1.0, lambda x: x * 10.0], np.float64(2.0)))
    20.0
    """
    from ..numpy import clip, equal

    if len(branches) == 0:
        raise ValueError("switch: give at least one branch")
    _check_index(index, "switch", "the index")
    if not isinstance(index, Tracer):
        return branches[int(np.clip(index, 0, len(branches) - 1))](*operands)
    if len(branches) == 1:
        return branches[0](*operands)
    index = clip(index, 0, len(branches) - 1)

    def chain(k: int) -> Callable:  # branch k if index == k, else the branches after it
        if k == len(branches) - 1:
            return branches[k]
        return lambda *ops: cond(equal(index, k), branches[k], chain(k + 1), *ops)

    return chain(0)(*operands)


@api_boundary
def map(f: Callable, xs: Any) -> Any:  # noqa: A001 (lax.map's name)
    """`f` applied to each row of `xs` (a pytree), the results stacked, as `lax.map`: a
    `scan` with no carry.

    >>> import numpy as np, rune_jit as rune
    >>> rune.map(lambda x: x * 2.0, np.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """
    return scan(lambda c, x: (c, f(x)), (), xs)[1]


@api_boundary
def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive prefix of `elems` along `axis` under the associative `fn` (a pytree
    of arrays of one leading size), as `lax.associative_scan`. On a CPU the fastest
    correct form is the sequential one: a `scan` carrying the running prefix, n - 1
    applications of `fn` where a parallel tree makes about 2 n.

    >>> import numpy as np, rune_jit as rune
    >>> rune.associative_scan(lambda a, b: a + b, np.arange(1.0, 5.0)).tolist()
    [1.0, 3.0, 6.0, 10.0]
    """
    from ..numpy import concatenate, expand_dims, moveaxis

    leaves, xs_tree = tree.flatten(elems)
    if not leaves:
        return elems
    shapes = [type_of_value(x).shape for x in leaves]
    sizes = {s[axis] for s in shapes if -len(s) <= axis < len(s)}
    if len(sizes) != 1 or any(not -len(s) <= axis < len(s) for s in shapes):
        raise ValueError(f"associative_scan: the leaves of elems must have one size along "
                         f"axis {axis}; their shapes are {shapes}")
    rows = [moveaxis(x, axis, 0) for x in leaves]
    if reverse:
        rows = [r[::-1] for r in rows]
    n = sizes.pop()
    if n == 0:
        return elems
    first = [r[0] for r in rows]

    def step(acc, x):
        out = tree.flatten(fn(tree.unflatten(xs_tree, acc), tree.unflatten(xs_tree, x)))[0]
        return out, out

    rest = scan(step, first, [r[1:] for r in rows])[1] if n > 1 else [r[:0] for r in rows]
    out = [concatenate([expand_dims(f0, 0), r]) for f0, r in zip(first, rest)]
    if reverse:
        out = [o[::-1] for o in out]
    return tree.unflatten(xs_tree, [moveaxis(o, 0, axis) for o in out])
