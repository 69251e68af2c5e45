"""Sorting along the last axis, and prefix operations (cumulative sums, products, extrema)
along any axis.

    sort(x) == (np.sort(x, kind="stable"), np.argsort(x, kind="stable"))   # last axis
    cumulative(x, axis, "sum") == np.cumsum(x, axis)     # also "prod", "max", "min"

A sort gives the values and the permutation (int64), stable, NaNs last as in NumPy
(`descending`: the reverse order of the keys, NaNs first, ties still in their
original order). Its derivative flows through the permutation; the permutation's is
zero. A cumulative sum is linear (its transpose is the cumulative sum the other way);
the tangents of the others are a scan of their recurrences, exact where values are 0
and splitting ties of max/min equally, as the elementwise max and min do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ad_util import Zero
from ..ir import Type
from ..primitive import NOT_LINEAR, Primitive
from ..trace import bind, bind1, type_of_value
from . import elementwise as ew
from .gather import gather
from .shape import concatenate, iota, moveaxis, reshape, rev, slice_op

sort_p = Primitive("sort", traits=frozenset({"costly"}))
cumulative_p = Primitive("cumulative", traits=frozenset({"costly"}))
INDEX = np.dtype(np.int64)
CUMULATIVE = ("sum", "prod", "max", "min")


@sort_p.def_rule("shape")
def _sort_shape(x: Type, *, descending):
    if x.ndim == 0:
        raise ValueError("sort: a 0-d value has no axis to sort along")
    return [x, x.with_dtype(INDEX)]


@sort_p.def_rule("impl")
def _sort_impl(x, *, descending):
    if descending:  # reverse the key order, keep ties in order: sort the reversed row
        rev = x[..., ::-1]
        perm = np.argsort(rev, axis=-1, kind="stable")[..., ::-1]
        perm = x.shape[-1] - 1 - perm
        return [np.take_along_axis(x, perm, -1), perm.astype(INDEX)]
    perm = np.argsort(x, axis=-1, kind="stable")
    return [np.take_along_axis(x, perm, -1), perm.astype(INDEX)]


def sort(x: Any, descending: bool = False) -> list:
    """[the values sorted along the last axis, the permutation that sorts them]."""
    return bind(sort_p, x, descending=bool(descending))


def take_last(x: Any, perm: Any) -> Any:
    """x[..., perm] per row: `np.take_along_axis(x, perm, -1)` for perm of x's shape."""
    shape = type_of_value(x).shape
    lead = [iota(shape, a, INDEX) for a in range(len(shape) - 1)]
    return gather(x, [*lead, perm])


@sort_p.def_rule("jvp")
def _sort_jvp(primals, tangents, *, descending):
    (x,), (t,) = primals, tangents
    values, perm = sort(x, descending)
    tv = Zero(type_of_value(values)) if isinstance(t, Zero) else take_last(t, perm)
    return [values, perm], [tv, Zero(type_of_value(perm))]


sort_p.def_rule("batch", lambda size, args, dims, *, descending: (
    sort(args[0], descending), [0, 0]))
sort_p.def_rule("transpose", NOT_LINEAR)


# ------------------------------------------------------------- prefix operations


@cumulative_p.def_rule("shape")
def _cumulative_shape(x: Type, *, axis, op, reverse):
    if op not in CUMULATIVE:
        raise ValueError(f"cumulative: op must be one of {CUMULATIVE}, got {op!r}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"cumulative: axis {axis} is out of range for {x}")
    if op == "sum" and x.dtype.kind == "b":
        raise TypeError("cumulative sum of bool: convert to an integer first")
    return [x]


ACCUMULATE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


@cumulative_p.def_rule("impl")
def _cumulative_impl(x, *, axis, op, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = ACCUMULATE[op].accumulate(x, axis=axis, dtype=x.dtype) if x.size else x.copy()
    return [np.flip(out, axis) if reverse else out]


def cumulative(x: Any, axis: int, op: str = "sum", reverse: bool = False) -> Any:
    return bind1(cumulative_p, x, axis=axis, op=op, reverse=bool(reverse))


def _tangent_scan(x: Any, t: Any, axis: int, op: str, reverse: bool) -> Any:
    """The tangent of a cumulative product or extremum, by its recurrence along the
    axis: a scan carrying (value, tangent)."""
    from .scan import scan_flat

    xs, ts = moveaxis(x, axis, 0), moveaxis(t, axis, 0)
    if reverse:
        xs, ts = rev(xs, (0,)), rev(ts, (0,))
    n = type_of_value(xs).shape[0]

    def step(laned, carry, row):
        (v, tv), (xr, tr) = carry, row
        if op == "prod":
            new, tnew = ew.mul(v, xr), ew.add(ew.mul(tv, xr), ew.mul(v, tr))
        else:
            new = ew.max(v, xr) if op == "max" else ew.min(v, xr)
            half, one, zero = (np.asarray(c, type_of_value(v).dtype) for c in (0.5, 1.0, 0.0))
            wins = ew.select(ew.eq(xr, new), ew.select(ew.eq(v, new), half, one), zero)
            tnew = ew.add(ew.mul(tr, wins), ew.mul(tv, ew.sub(one, wins)))
        return [new, tnew], [tnew]

    head = _rows(ts, 0, 1)
    if n > 1:
        first = [reshape(_rows(xs, 0, 1), _row_shape(xs)), reshape(head, _row_shape(ts))]
        _, _, rest = scan_flat(step, first, [_rows(xs, 1, n), _rows(ts, 1, n)], length=n - 1)
        head = concatenate([head, rest], 0)
    if reverse:
        head = rev(head, (0,))
    return moveaxis(head, 0, axis)


def _rows(x: Any, start: int, stop: int) -> Any:
    shape = type_of_value(x).shape
    return slice_op(x, (start,) + (0,) * (len(shape) - 1), (stop,) + shape[1:])


def _row_shape(x: Any) -> tuple:
    return type_of_value(x).shape[1:]


@cumulative_p.def_rule("jvp")
def _cumulative_jvp(primals, tangents, *, axis, op, reverse):
    (x,), (t,) = primals, tangents
    out = cumulative(x, axis, op, reverse)
    if isinstance(t, Zero) or type_of_value(x).dtype.kind not in "fc":
        return [out], [Zero(type_of_value(out))]
    if op == "sum":
        return [out], [cumulative(t, axis, "sum", reverse)]
    return [out], [_tangent_scan(x, t, axis, op, reverse)]


@cumulative_p.def_rule("transpose")
def _cumulative_transpose(cts, x, *, axis, op, reverse):
    if op != "sum":
        raise NotImplementedError(f"cumulative {op} is not linear")
    return [cumulative(cts[0], axis, "sum", not reverse)]


cumulative_p.def_rule("batch", lambda size, args, dims, *, axis, op, reverse: (
    [cumulative(args[0], axis + 1, op, reverse)], [0]))
