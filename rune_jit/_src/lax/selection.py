"""jax.lax's selections: select, select_n and clamp, over the select primitive."""

from __future__ import annotations

from typing import Any

from ..numpy._core import shape_of
from ..ops import elementwise as ew
from .operands import ANY, BOOL, INT, array, dtype_of, operands

ArrayLike = Any
Array = Any


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """on_true where pred, else on_false: pred a bool scalar or of the cases' shape.

    >>> select(np.array([True, False]), np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [1.0, 4.0]
    """
    if dtype_of(array(pred, "lax.select")).kind != BOOL:
        raise TypeError(f"lax.select: pred must be a bool, got "
                        f"{dtype_of(array(pred, 'lax.select'))}")
    return _select_n(pred, (on_false, on_true), "lax.select")


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """cases[which], elementwise: `which` a bool (two cases) or an integer scalar or array
    of the cases' shape, in range (JAX leaves an index out of range undefined: here the
    last case).

    >>> select_n(np.array([0, 2, 1], np.int32), np.zeros(3), np.ones(3), np.full(3, 2.0)).tolist()
    [0.0, 2.0, 1.0]
    """
    return _select_n(which, cases, "lax.select_n")


def _select_n(which: ArrayLike, cases: tuple, where: str) -> Array:
    if not cases:
        raise ValueError(f"{where} needs at least one case")
    cases = operands(cases, ANY, where)
    which = array(which, where)
    shapes = {shape_of(c) for c in cases} | ({shape_of(which)} - {()})
    if len(shapes) > 1:
        raise TypeError(f"{where}: the predicate and the cases must have one shape (the "
                        f"predicate may be a scalar), got {sorted(shapes)}")
    kind = dtype_of(which).kind
    if kind == BOOL and len(cases) > 2 or kind not in INT + BOOL:
        raise TypeError(f"{where}: which must be a bool (two cases) or an integer, "
                        f"got {dtype_of(which)} for {len(cases)} cases")
    if kind == BOOL:
        return ew.select(which, cases[-1], cases[0])
    out = cases[-1]
    for k in reversed(range(len(cases) - 1)):
        out = ew.select(ew.eq(which, ew.const(k, which)), cases[k], out)
    return out


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:  # noqa: A002
    """x limited to [min, max]; min and max scalars or of x's shape.

    >>> clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0).tolist()
    [0.0, 0.5, 1.0]
    """
    lo, x, hi = operands([min, x, max], ANY, "lax.clamp")
    # x's derivative is 0 at the bounds too, as JAX's; nan stays nan
    return ew.select(ew.le(x, lo), lo, ew.select(ew.ge(x, hi), hi, x))
