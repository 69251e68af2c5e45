"""The user's `scan`: pytrees, the carry's check, the eager cache, the Python path of
disable_jit and the checkpointed form, over the scan primitive's flat binding
(ops/scan.py: scan_flat)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import eager, tree
from ..call.arguments import as_value, flatten_args, leaf_type
from ..ops.checkpointed import checked_checkpoints, checkpointed
from ..ops.scan import scan_flat
from ..trace import trace_flat
from ..tracebacks import api_boundary
from . import python_loops
from .carry import UserCarry


@api_boundary
def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool | None = None,
         checkpoints: int | str = "all") -> tuple[Any, Any]:
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`; -> (carry, ys).

    The meaning, as a Python loop::

        carry, ys = init, []
        for x in (reversed(xs) if reverse else xs):   # length steps if xs is None
            carry, y = f(carry, x)
            ys.append(y)
        return carry, stack(ys)                        # in the order of xs

    `init`, the rows `x` and `y` are pytrees (tuples, lists, dicts, dataclasses...) of
    arrays; every leaf of `xs` has the same leading size, the number of steps (or give
    `length`, and `xs=None` for a loop with no input). `y` may be None. `f` must return
    a carry of exactly `init`'s structure, shapes and dtypes (a Python number in `init`
    takes the dtype `f` gives it): otherwise a TypeError names the leaf and both types,
    e.g. "the step returns carry[1] of type float64[], but init[1] has type int32[]".
    `f` is traced once, whatever the number of steps; every transformation of a scan is
    a scan of `f`'s transformation. `unroll` is accepted as in `lax.scan` (LLVM decides
    how compiled loops unroll).

    `checkpoints` bounds the memory of reverse mode: "all" keeps every step's residuals
    (a tape); an int k < the number of steps n keeps at most k carries (and a scratch
    one) and computes the others again by the binomial schedule, the fewest recomputed
    steps for k (docs/loops.md, "Checkpointing"). The result and its derivatives are
    the same either way; a loop that reverse mode never sees costs nothing more.

    >>> import numpy as np, rune_jit as rune
    >>> total, prefixes = rune.scan(lambda c, x: (c * x, c * x), 1.0, np.arange(1.0, 5.0))
    >>> float(total), prefixes.tolist()
    (24.0, [1.0, 2.0, 6.0, 24.0])
    """
    k = _checked_options(unroll, checkpoints)
    out = eager.cached(f, (f, length, reverse, unroll, k), (), (init, xs), lambda i, x: scan(
        f, i, x, length, reverse, unroll, checkpoints), "scan", tiered=False)
    if out is not eager.NOT_CACHED:
        return out
    init_leaves, init_tree, _ = flatten_args(init, "init")
    xs_leaves, xs_tree, xs_paths = flatten_args(xs, "xs")
    n = _scan_length(xs_leaves, xs_paths, length)
    if n > 0 and python_loops.concrete(init_leaves, xs_leaves):
        return python_loops.scan(f, init, xs, n, reverse)
    carry = UserCarry("scan", init_leaves, init_tree)
    seen: dict = {}

    def step(laned, c, rows):
        x = tree.unflatten(xs_tree, rows) if xs is not None else None
        out = f(tree.unflatten(init_tree, c), x)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("scan: f must return a pair (carry, y)")
        c_leaves, c_tree, _ = flatten_args(out[0], "carry")
        y_leaves, seen["y"], _ = flatten_args(out[1], "y")
        carry.returned(c_tree, [leaf_type(v)[0] for v in c_leaves])
        return [as_value(v) for v in c_leaves], [as_value(y) for y in y_leaves]

    row_types = [leaf_type(x)[0].with_shape(leaf_type(x)[0].shape[1:]) for x in xs_leaves]
    nc = len(init_leaves)
    carry.promote(lambda types, weak: trace_flat(
        lambda *p: sum(step([], list(p[:nc]), list(p[nc:])), []), types + row_types,
        weak + [False] * len(row_types)))
    args = carry.values + [as_value(x) for x in xs_leaves]
    outs = _scan_or_checkpointed(step, args, nc, n, reverse, k)
    return tree.unflatten(init_tree, outs[:nc]), tree.unflatten(seen["y"], outs[nc:])


def _checked_options(unroll: Any, checkpoints: Any) -> int | None:
    """`checkpoints` as a number of carries (None: "all"), after checking `unroll`."""
    if unroll is not None and not isinstance(unroll, (bool, int, np.integer)):
        raise TypeError(f"scan: unroll must be an int or a bool, got {unroll!r}")
    return checked_checkpoints(checkpoints)


def _scan_or_checkpointed(step: Callable, args: list, nc: int, n: int, reverse: bool,
                          k: int | None) -> list:
    """The scan of `step`; with k checkpoints fewer than its n steps, wrapped so that
    reverse mode keeps k carries and computes the others again."""
    run = lambda *v: scan_flat(step, list(v[:nc]), list(v[nc:]), length=n,  # noqa: E731
                               reverse=reverse)
    return run(*args) if k is None or k >= n else checkpointed(run, args, k)


def _scan_length(xs: list, paths: list[str], length: int | None) -> int:
    shapes = [leaf_type(x)[0].shape for x in xs]
    for s, p in zip(shapes, paths):
        if not s:
            raise ValueError(f"scan: {p} is a scalar; every leaf of xs needs a leading axis "
                             "to scan over")
    sizes = {p: s[0] for s, p in zip(shapes, paths)}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{p} has {n}" for p, n in sizes.items())
        raise ValueError(f"scan: the leaves of xs have different leading sizes: {shown}")
    first = next(iter(sizes.values()), None)
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"scan: length must be a non-negative int, got {length!r}")
        if first is not None and first != length:
            raise ValueError(f"scan: length = {length} but xs has leading size {first}")
        return int(length)
    if first is None:
        raise ValueError("scan: give xs or length")
    return first
