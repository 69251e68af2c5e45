"""The loops run as Python while disable_jit is on (python_mode.py): each step called
with NumPy arrays, its carry checked as the staged loops check it."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tree
from ..call.arguments import leaf_type
from ..errors import IterateError, iterate_message
from ..call.python_mode import active
from ..trace import Tracer, current
from .carry import check_carry, promotable


def concrete(*values: Any) -> bool:
    """Whether disable_jit is on, nothing is being traced (a step may read traced values
    it captures) and no leaf of `values` is traced."""
    return active() and current() is None and not any(
        isinstance(x, Tracer) for x in tree.flatten(values)[0])


def _checked_carry(who: str, init: Any, out: Any) -> Any:
    """The step's carry as arrays of init's structure, shapes and dtypes (a Python
    number in init takes the dtype the step gives it), as the staged loops check it."""
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
