"""The user's `cond` and `stop_gradient`: pytrees of operands and results, and the
Python path of disable_jit, over the cond and stop_gradient primitives (ops/control.py)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tree
from ..ir import Region
from ..ops.control import cond_p, stop_gradient_p
from ..ops.elementwise import ne
from ..trace import bind, bind1, trace_regions, type_of_value
from ..tracebacks import api_boundary
from . import python_loops


@api_boundary
def cond(pred: Any, true_fn: Callable, false_fn: Callable, *operands: Any) -> Any:
    """`true_fn(*operands)` if `pred` else `false_fn(*operands)`, chosen at run time.

    >>> rune.jit(lambda x: rune.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x))(-3.0)
    array(3.)
    """
    ptype = type_of_value(pred)
    if ptype.shape != ():
        raise TypeError(f"cond: the predicate must be a scalar, got shape {ptype.shape}")
    if python_loops.concrete(pred, operands):
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    if ptype.dtype.kind != "b":
        pred = ne(pred, np.zeros((), ptype.dtype))
    leaves, in_tree = tree.flatten(operands)
    types = [type_of_value(x) for x in leaves]
    out_trees: list = []

    def flat(fn):
        def run(*xs):
            outs, out_tree = tree.flatten(fn(*tree.unflatten(in_tree, xs)))
            out_trees.append(out_tree)
            return outs
        return run

    (t, f), caps = trace_regions([flat(true_fn), flat(false_fn)], [types, types])
    _check_branches(out_trees, t, f)
    outs = bind(cond_p, *caps, pred, *leaves, branches=(t, f), num_captures=len(caps))
    return tree.unflatten(out_trees[0], outs)


def _check_branches(out_trees, t: Region, f: Region) -> None:
    if out_trees[0] != out_trees[1]:
        path, a, b = tree.first_difference(*out_trees)
        raise TypeError(f"cond: true_fn returns {out_trees[0]} but false_fn returns "
                        f"{out_trees[1]}: output{path} is {a} in true_fn but {b} in false_fn")
    for path, a, b in zip(tree.leaf_paths(out_trees[0]), t.out_types, f.out_types):
        if a != b:
            raise TypeError(f"cond: output{path} is {a} in true_fn but {b} in false_fn")


def stop_gradient(x: Any) -> Any:
    """`x`, through which no derivative flows. Works on pytrees.

    >>> rune.grad(lambda x: x * rune.stop_gradient(x))(3.0)
    array(3.)
    """
    return tree.tree_map(lambda v: bind1(stop_gradient_p, v), x)
