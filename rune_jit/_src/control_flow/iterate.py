"""The user's `iterate`: pytrees, the carry's and `until`'s checks, the eager cache and
the Python path of disable_jit, over the iterate primitive's flat binding
(ops/iterate.py: iterate_flat)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import eager, tree
from ..call.arguments import as_value, flatten_args, leaf_type
from ..ops.checkpointed import checked_checkpoints, checkpointed
from ..ops.iterate import iterate_flat
from ..trace import trace_flat
from ..tracebacks import api_boundary
from . import python_loops
from .carry import UserCarry


@api_boundary
def iterate(step: Callable, init: Any, *, until: Callable, max_steps: int,
            checkpoints: int | str = "all") -> Any:
    """Apply `step` to the carry until `until(carry)` holds; at most `max_steps` steps.

    The meaning, as a Python loop::

        carry, n = init, 0
        while not until(carry):          # tested before each step: 0 steps if it holds
            if n == max_steps:
                raise IterateError(...)  # "until is still false after max_steps = ..."
            carry, n = step(carry), n + 1
        return carry

    `init` is a pytree of arrays; `step` must return a carry of exactly its structure,
    shapes and dtypes, and `until` a bool scalar. Under `vmap` each lane stops on its
    own test (a lane that is done keeps its carry) and the error names the first lane
    still running. Reverse mode differentiates every step taken, lane by lane.

    `checkpoints` bounds the memory of reverse mode: "all" keeps every step's residuals
    (a tape of max_steps rows, or of the steps taken when unbounded); an int k keeps at
    most k carries per lane (and a scratch one), whatever the number of steps, and
    computes the others again by an online schedule (docs/loops.md, "Checkpointing").
    The result and its derivatives are the same either way; a loop that reverse mode
    never sees costs nothing more.

    >>> import numpy as np, rune_jit as rune
    >>> float(rune.iterate(lambda x: (x + 2.0 / x) / 2, np.float64(1.0),
    ...                    until=lambda x: abs(x * x - 2.0) < 1e-12, max_steps=50))
    1.414213562373095
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or (
            max_steps < 1):
        raise ValueError(f"iterate: max_steps must be a positive int, got {max_steps!r}")
    k = checked_checkpoints(checkpoints, "iterate")
    out = eager.cached(step, (step, until, max_steps, k), (), (init,), lambda i: iterate(
        step, i, until=until, max_steps=max_steps, checkpoints=checkpoints), "iterate",
        tiered=False)
    if out is not eager.NOT_CACHED:
        return out
    leaves, init_tree, _ = flatten_args(init, "init")
    if python_loops.concrete(leaves):
        return python_loops.iterate(step, init, until, int(max_steps))
    carry = UserCarry("iterate", leaves, init_tree)

    def step_fn(laned, c):
        out, out_tree, _ = flatten_args(step(tree.unflatten(init_tree, c)), "carry")
        carry.returned(out_tree, [leaf_type(v)[0] for v in out])
        return [as_value(v) for v in out], []

    def until_fn(laned, c):
        out, _, _ = flatten_args(until(tree.unflatten(init_tree, c)), "until")
        t = leaf_type(out[0])[0] if len(out) == 1 else None
        if t is None or t.dtype != np.dtype(bool) or t.shape != ():
            got = t if t is not None else f"{len(out)} values"
            raise TypeError(f"iterate: until must return a bool scalar, got {got}")
        return as_value(out[0])

    carry.promote(lambda types, weak: trace_flat(lambda *c: step_fn([], list(c))[0], types,
                                                 weak))
    def run(*c):
        return iterate_flat(step_fn, until_fn, list(c), max_steps=int(max_steps))

    # (k >= max_steps: the tape holds no more than k carries)
    outs = run(*carry.values) if k is None or k >= max_steps else checkpointed(
        run, carry.values, k)
    return tree.unflatten(init_tree, outs[:len(leaves)])
