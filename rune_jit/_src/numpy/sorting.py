"""Sorting, searching, order statistics, prefix operations and counting, with NumPy's
signatures: sort, argsort, searchsorted, partition, argpartition, unique, nonzero,
flatnonzero, median, quantile, percentile (and their nan* forms), cumsum, cumprod,
cumulative_sum, cumulative_prod, diff, bincount, take, take_along_axis.

A function whose result's size depends on the values (unique, nonzero) takes a static
`size=` under a trace, as in JAX; outside one it is NumPy's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops import elementwise as ew
from ..ops.gather import gather, scatter
from ..ops.shape import broadcast_in_dim, concatenate, iota, reshape, slice_op
from ..ops.scan import scan_flat
from ..ops.sort import cumulative, sort as sort_last
from ..trace import Tracer, current, type_of_value
from ..dtypes import float_for
from ._core import (accept, as_value, dtype_weak, normalize_axis, promote, real_only,
                    shape_of, to_dtype)
from . import complex_order
from .advanced import default_fill
from .advanced import take as take_key
from .shapes import moveaxis

INDEX = np.dtype(np.int64)
FLOAT64 = np.dtype(np.float64)


def _array(a: Any, where: str) -> Any:
    (a,) = promote(a, where=where)
    return as_value(a)


def _traced(*xs: Any) -> bool:
    return current() is not None or any(isinstance(x, Tracer) for x in xs)


def _along_last(a: Any, axis: Any, where: str) -> tuple[Any, int]:
    """(a with `axis` moved last, the axis), axis=None flattening a first."""
    if axis is None:
        return reshape(a, (math.prod(shape_of(a)),)), -1
    ax = normalize_axis(axis, len(shape_of(a)), where)
    return moveaxis(a, ax, -1), ax


def _sorted(a: Any, axis: Any, where: str, descending: bool = False) -> tuple[Any, Any, Any]:
    a = _array(a, where)
    if not shape_of(a) and axis is not None:
        raise np.exceptions.AxisError(f"{where}: axis {axis} is out of bounds for array of "
                                      "dimension 0")
    moved, ax = _along_last(a, axis, where)
    values, perm = sort_last(moved, descending)
    return values, perm, ax


def _back(x: Any, ax: int) -> Any:
    return x if ax == -1 else moveaxis(x, -1, ax)


def sort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None, descending: bool = False) -> Any:
    """A sorted copy of `a` along `axis` (stable whatever `kind` says; NaNs last).
    `descending=True` sorts from the largest (NaNs first), keeping ties in order.

    >>> import numpy as np, rune_jit.numpy as rnp
    >>> rnp.sort(np.array([3.0, np.nan, 1.0])).tolist()
    [1.0, 3.0, nan]
    """
    if order is not None:
        raise TypeError("rune_jit.numpy.sort: order= (structured arrays) is not supported")
    values, _, ax = _sorted(a, axis, "rune_jit.numpy.sort", descending)
    return _back(values, ax)


def argsort(a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None, descending: bool = False) -> Any:
    """The indices that sort `a` along `axis` (stable), int64."""
    if order is not None:
        raise TypeError("rune_jit.numpy.argsort: order= is not supported")
    _, perm, ax = _sorted(a, axis, "rune_jit.numpy.argsort", descending)
    return _back(perm, ax)


def partition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """NumPy's partition, by a full sort (a sorted array is partitioned at every kth)."""
    return sort(a, axis)


def argpartition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    return argsort(a, axis)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """Where `v` would go in the sorted 1-d `a` (`side` "left": before equal values,
    "right": after them), by a binary search of ceil(log2(len(a) + 1)) steps."""
    if side not in ("left", "right"):
        raise ValueError(f"rune_jit.numpy.searchsorted: side must be 'left' or 'right', "
                         f"got {side!r}")
    a, v = promote(a, v, where="rune_jit.numpy.searchsorted")
    a, v = as_value(a), as_value(v)
    if len(shape_of(a)) != 1:
        raise ValueError("rune_jit.numpy.searchsorted: a must be 1-dimensional")
    if sorter is not None:
        a = gather(a, [to_dtype(as_value(accept(sorter)), INDEX)])
    n = shape_of(a)[0]
    vs = shape_of(v)
    lo = broadcast_in_dim(np.zeros((), INDEX), vs, ())
    if n == 0:
        return lo
    hi = broadcast_in_dim(np.asarray(n, INDEX), vs, ())
    for _ in range(max(n, 1).bit_length()):  # invariant: a[:lo] goes before v, a[hi:] not
        mid = ew.floor_divide(ew.add(lo, hi), np.asarray(2, INDEX))
        at = gather(a, [ew.min(mid, np.asarray(n - 1, INDEX))], "clip")
        go_right = ew.logical_and(ew.lt(mid, hi), _before(at, v, side))
        lo = ew.select(go_right, ew.add(mid, np.asarray(1, INDEX)), lo)
        hi = ew.select(go_right, hi, mid)
    return lo


def _before(at: Any, v: Any, side: str) -> Any:
    """Whether `at` goes before `v` in sort order (NaNs last, as sort puts them): `at < v`
    for side "left", `at <= v` for "right". A NaN `v` goes after every number."""
    if type_of_value(v).dtype.kind == "c":  # NumPy's sort order of complex values
        if side == "left":
            return complex_order.sort_less(at, v)
        return ew.logical_not(complex_order.sort_less(v, at))
    if type_of_value(v).dtype.kind != "f":
        return ew.lt(at, v) if side == "left" else ew.le(at, v)
    if side == "left":  # at < v, or v NaN and at a number
        return ew.logical_or(ew.lt(at, v), ew.logical_and(ew.isnan(v), ew.logical_not(
            ew.isnan(at))))
    return ew.logical_or(ew.le(at, v), ew.isnan(v))  # at <= v, or v NaN


# ------------------------------------------------------------- data-dependent sizes


def _size_needed(name: str, size: Any) -> int:
    if size is None:
        raise TypeError(f"rune_jit.numpy.{name}: the size of the result depends on the "
                        f"values, which a traced program does not know: give size= (at most "
                        f"that many results, the rest filled with fill_value)")
    return int(size)


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple:
    """The indices of the nonzero elements, one array per axis (NumPy's). Under a trace
    `size=` is needed: the first `size` positions, the rest `fill_value` (default 0)."""
    a = as_value(accept(a, "rune_jit.numpy.nonzero"))
    shape = shape_of(a)
    if not _traced(a) and size is None:
        return np.nonzero(a)
    n = _size_needed("nonzero", size)
    fill = np.zeros((), INDEX) if fill_value is None else np.asarray(fill_value, INDEX)
    if math.prod(shape) == 0:  # nothing is nonzero: every entry is the fill
        return tuple(broadcast_in_dim(fill, (n,), ()) for _ in shape)
    flat = reshape(ew.ne(a, np.zeros((), type_of_value(a).dtype)), (math.prod(shape),))
    rank = ew.sub(cumulative(ew.convert(flat, INDEX), 0), np.asarray(1, INDEX))
    slot = ew.select(flat, rank, np.asarray(n, INDEX))  # the others land past the end
    positions = scatter(broadcast_in_dim(np.asarray(-1, INDEX), (n,), ()), [slot],
                        iota((math.prod(shape),), 0, INDEX), "set", "drop")
    found = ew.ge(positions, np.zeros((), INDEX))
    out = []
    stride = math.prod(shape)
    for dim in shape:
        stride //= dim
        coord = ew.remainder(ew.floor_divide(positions, np.asarray(stride, INDEX)),
                             np.asarray(dim, INDEX))
        out.append(ew.select(found, coord, broadcast_in_dim(fill, (n,), ())))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements of the flattened `a` (see nonzero for size=)."""
    a = as_value(accept(a, "rune_jit.numpy.flatnonzero"))
    if size is None and _traced(a):
        _size_needed("flatnonzero", size)
    return nonzero(reshape(a, (math.prod(shape_of(a)),)), size=size,
                   fill_value=fill_value)[0]


def unique(a: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, size: int | None = None,
           fill_value: Any = None) -> Any:
    """The sorted unique values of the flattened `a` (NumPy's). Under a trace `size=` is
    needed: the first `size` unique values, the rest `fill_value` (default: the
    smallest value of a)."""
    a = as_value(accept(a, "rune_jit.numpy.unique"))
    if axis is not None or return_index or return_inverse or return_counts:
        if not _traced(a) and size is None:
            return np.unique(a, return_index, return_inverse, return_counts, axis=axis)
        raise TypeError("rune_jit.numpy.unique: under a trace, only the values (no axis=, "
                        "return_index, return_inverse or return_counts)")
    if not _traced(a) and size is None:
        return np.unique(a)
    n = _size_needed("unique", size)
    values = sort_last(reshape(a, (math.prod(shape_of(a)),)))[0]
    m = shape_of(values)[0]
    if m == 0:
        return broadcast_in_dim(np.asarray(fill_value or 0, type_of_value(a).dtype), (n,), ())
    later, earlier = slice_op(values, (1,), (m,)), slice_op(values, (0,), (m - 1,))
    fresh = ew.ne(later, earlier)
    if type_of_value(values).dtype.kind == "f":  # NaNs (sorted last) are one value, as
        # in NumPy's and JAX's unique (equal_nan=True)
        fresh = ew.logical_and(fresh, ew.logical_not(ew.logical_and(ew.isnan(later),
                                                                    ew.isnan(earlier))))
    firsts = concatenate([broadcast_in_dim(np.asarray(True), (1,), ()), fresh], 0)
    rank = ew.sub(cumulative(ew.convert(firsts, INDEX), 0), np.asarray(1, INDEX))
    slot = ew.select(firsts, rank, np.asarray(n, INDEX))
    fill = (slice_op(values, (0,), (1,)) if fill_value is None
            else broadcast_in_dim(np.asarray(fill_value, type_of_value(a).dtype), (1,), ()))
    base = broadcast_in_dim(reshape(fill, ()), (n,), ())
    return scatter(base, [slot], values, "set", "drop")


# ------------------------------------------------------------- order statistics

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, nan: bool = False,
             where: str = "quantile") -> Any:
    """The q-th quantiles of `a` along `axis` (NumPy's default method "linear"; also
    "lower", "higher", "nearest", "midpoint"), computed as NumPy computes them: "lower",
    "higher" and "nearest" (and "linear" at an integer q) give an element, of a's dtype;
    the others interpolate with NumPy's formula, in a's float dtype (float64 for
    integers) promoted with q's unless q is a Python number. `q` is a number or an
    array of them (its axes come first in the result, as NumPy's). The derivative flows
    through the sorting permutation, to the one or two elements each quantile is made
    of."""
    if out is not None:
        raise TypeError(f"rune_jit.numpy.{where}: out= is not supported")
    if method not in METHODS:
        raise ValueError(f"rune_jit.numpy.{where}: method must be one of {METHODS}, got "
                         f"{method!r}")
    a = _array(a, f"rune_jit.numpy.{where}")
    q = accept(q, f"rune_jit.numpy.{where}")
    q_dtype, weak = dtype_weak(q)
    q = as_value(q)
    if not isinstance(q, Tracer) and not np.all((np.asarray(q) >= 0) & (np.asarray(q) <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    a_dtype = type_of_value(a).dtype
    # an element is read (no arithmetic) for these, as NumPy's take of the position
    exact = method in ("lower", "higher", "nearest") or (method == "linear" and
                                                          q_dtype.kind in "biu")
    if exact:
        out_dtype = a_dtype
    else:
        out_dtype = a_dtype if a_dtype.kind == "f" else FLOAT64
        if not weak:
            out_dtype = np.result_type(out_dtype, float_for(q_dtype))
    pos_dtype = q_dtype if q_dtype.kind == "f" else FLOAT64  # NumPy's virtual index's
    shape = shape_of(a)
    values, _, ax = _sorted(a, axis, f"rune_jit.numpy.{where}")
    q = to_dtype(q, pos_dtype)
    n = shape_of(values)[-1]
    count = _valid_count(values, n, nan, pos_dtype)
    if n == 0:
        result = _nans(shape_of(q) + shape_of(values)[:-1], out_dtype)
    elif exact:
        result = _element_at(values, q, count, method)
    else:
        result = _lerp_at(values, q, count, method, out_dtype)
    result = _nan_rows(result, values, count, nan)
    return _keep_q(result, shape, axis, keepdims, len(shape_of(q)))


def _nans(shape: tuple, dtype: np.dtype, nan: Any = np.nan) -> Any:
    return broadcast_in_dim(np.asarray(nan, dtype), shape, ())


def _nan_rows(result: Any, values: Any, count: Any, nan: bool) -> Any:
    """NaN where a row's statistic is: NumPy's rule, a NaN in the row (sorted last: the
    row's last value, as NumPy's, which copies it; a complex value is NaN when a part
    is), or for the nan* forms a row of NaNs only. Rows come last in `result`."""
    dt = type_of_value(result).dtype
    if type_of_value(values).dtype.kind not in "fc":  # no NaNs
        return result
    rows = len(shape_of(values)) - 1
    n = shape_of(values)[-1]
    rs = shape_of(result)
    if nan:
        bad = ew.eq(count, np.zeros((), type_of_value(count).dtype))
        fill = _nans(rs, dt)
    elif n == 0:
        return result
    else:
        last = slice_op(values, (0,) * rows + (n - 1,), shape_of(values))
        last = ew.convert(reshape(last, shape_of(values)[:-1]), dt)
        bad, fill = ew.isnan(last), _along_rows(last, rs, rows)
    return ew.select(_along_rows(bad, rs, rows), fill, result)


def _along_rows(x: Any, shape: tuple, rows: int) -> Any:
    """A value per row broadcast to `shape`, whose last `rows` axes are the rows'."""
    if shape_of(x) == shape:
        return x
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - rows, len(shape))))


def _valid_count(values: Any, n: int, nan: bool, dt: np.dtype) -> Any:
    """The number of values each row's statistic reads (in `dt`): all, or the non-NaN
    ones (sorted last) for the nan* forms."""
    if not nan or type_of_value(values).dtype.kind not in "fc":
        return np.asarray(n, dt)
    from ..ops.reduce import reduce_sum

    rows = len(shape_of(values)) - 1
    return reduce_sum(ew.convert(ew.logical_not(ew.isnan(values)), dt), (rows,))


def _positions(q: Any, count: Any, rows: tuple) -> tuple[Any, Any]:
    """(NumPy's virtual index (count - 1) * q, count - 1), of shape q's + rows."""
    dt = type_of_value(q).dtype
    qs = shape_of(q)
    full = qs + rows
    qb = broadcast_in_dim(q, full, tuple(range(len(qs))))
    last = ew.sub(count, np.ones((), dt))
    last = broadcast_in_dim(last, full, tuple(range(len(qs), len(full))) if shape_of(
        last) else ())
    return ew.mul(last, qb), last


def _element_at(values: Any, q: Any, count: Any, method: str) -> Any:
    """The element at NumPy's position for "lower" (floor), "higher" (ceil), "nearest"
    (rounded half to even) and "linear" at an integer q: read, with no arithmetic."""
    pos, last = _positions(q, count, shape_of(values)[:-1])
    if method in ("lower", "higher"):
        pos = (ew.floor if method == "lower" else ew.ceil)(pos)
    elif method == "nearest":
        pos = ew.rint(pos)
    zero = np.zeros((), type_of_value(pos).dtype)
    return _row_read(values, ew.max(ew.min(pos, ew.max(last, zero)), zero), shape_of(q))


def _lerp_at(values: Any, q: Any, count: Any, method: str, dt: np.dtype) -> Any:
    """NumPy's interpolation between the elements around each virtual index:
    a + (b - a) * g for g < 0.5, else b - (b - a) * (1 - g); past the last element both
    are the last (g counted from -1, as NumPy's), before the first both the first."""
    pos, last = _positions(q, count, shape_of(values)[:-1])
    pdt = type_of_value(pos).dtype
    zero, one, half = (np.asarray(c, pdt) for c in (0.0, 1.0, 0.5))
    if method == "midpoint":
        pos = ew.mul(half, ew.add(ew.floor(pos), ew.ceil(pos)))
    below = ew.floor(pos)
    above_end, before_start = ew.ge(pos, last), ew.lt(pos, zero)
    prev = ew.select(above_end, ew.neg(one), ew.select(before_start, zero, below))
    gamma = ew.sub(pos, prev)
    if method == "midpoint":
        gamma = ew.select(ew.eq(ew.remainder(pos, one), zero), zero, half)
    i_prev = ew.select(above_end, last, prev)
    i_next = ew.select(above_end, last, ew.select(before_start, zero, ew.add(below, one)))
    qs = shape_of(q)
    lo = to_dtype(_row_read(values, i_prev, qs), dt)
    hi = to_dtype(_row_read(values, i_next, qs), dt)
    diff = ew.sub(hi, lo)
    up = ew.add(lo, ew.mul(diff, to_dtype(gamma, dt)))
    down = ew.sub(hi, ew.mul(diff, to_dtype(ew.sub(one, gamma), dt)))
    return ew.select(ew.ge(gamma, half), down, up)


def _row_read(values: Any, position: Any, qs: tuple) -> Any:
    """values[row, position[q, row]] for every q and row: a gather."""
    rows = shape_of(values)[:-1]
    full = qs + rows
    coords = [iota(full, len(qs) + d, INDEX) for d in range(len(rows))]
    return gather(values, coords + [ew.convert(position, INDEX)], "clip")


def _keep_q(result: Any, shape: tuple, axis: Any, keepdims: bool, nq: int) -> Any:
    if not keepdims:
        return result
    axes = range(len(shape)) if axis is None else [normalize_axis(a, len(shape), "quantile")
                                                   for a in np.atleast_1d(axis)]
    rs = shape_of(result)
    kept = [1 if i in axes else n for i, n in enumerate(shape)]
    return reshape(result, rs[:nq] + tuple(kept))


def _percent(q: Any) -> Any:
    """q / 100 for percentile, a Python number staying one (weak, as NumPy's)."""
    if type(q) in (int, float):
        if not 0 <= q <= 100:
            raise ValueError("Percentiles must be in the range [0, 100]")
        return q / 100
    q = as_value(accept(q, "rune_jit.numpy.percentile"))
    if not isinstance(q, Tracer) and not np.all((np.asarray(q) >= 0) & (np.asarray(q) <= 100)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    dt = type_of_value(q).dtype
    return ew.div(to_dtype(q, dt if dt.kind == "f" else FLOAT64), np.asarray(100.0, dt if
                                                                               dt.kind == "f"
                                                                               else FLOAT64))


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """quantile of q / 100."""
    return quantile(a, _percent(q), axis, out, overwrite_input, method, keepdims,
                    where="percentile")


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False, *, nan: bool = False) -> Any:
    """NumPy's median: the middle element, or the mean of the two middle ones (computed
    as NumPy's mean: in float64 for integers, float32 for float16), NaN for a row with
    a NaN (nanmedian: the middle of the values that are not NaN). Complex values are
    NumPy's too: sorted in its lexicographic order, a NaN in either part a NaN."""
    if out is not None:
        raise TypeError("rune_jit.numpy.median: out= is not supported")
    a = _array(a, "rune_jit.numpy.median")
    a_dtype = type_of_value(a).dtype
    out_dtype = a_dtype if a_dtype.kind in "fc" else FLOAT64
    mean_dtype = np.dtype(np.float32) if a_dtype == np.float16 else out_dtype
    shape = shape_of(a)
    values, _, ax = _sorted(a, axis, "rune_jit.numpy.median")
    n = shape_of(values)[-1]
    count = _valid_count(values, n, nan, INDEX)
    if n == 0:
        # NumPy's mean of nothing, nan + nanj for complex values
        result = _nans(shape_of(values)[:-1], out_dtype, complex(np.nan, np.nan))
    else:
        rows = shape_of(values)[:-1]
        if shape_of(count) != rows:
            count = broadcast_in_dim(count, rows, ())
        two = np.asarray(2, INDEX)
        lo = ew.max(ew.floor_divide(ew.sub(count, np.ones((), INDEX)), two), np.zeros((), INDEX))
        hi = ew.floor_divide(count, two)
        at_lo = to_dtype(_row_read(values, lo, ()), mean_dtype)
        at_hi = to_dtype(_row_read(values, hi, ()), mean_dtype)
        mean = ew.div(ew.add(at_lo, at_hi), np.asarray(2, mean_dtype))
        result = to_dtype(ew.select(ew.eq(lo, hi), at_lo, mean), out_dtype)
    result = _nan_rows(result, values, count, nan)
    return _keep_q(result, shape, axis, keepdims, 0)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """quantile of the values that are not NaN (all-NaN rows give NaN)."""
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, nan=True,
                    where="nanquantile")


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    return quantile(a, _percent(q), axis, out, overwrite_input, method, keepdims, nan=True,
                    where="nanpercentile")


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    return median(a, axis, out, overwrite_input, keepdims, nan=True)


# ------------------------------------------------------------- prefix operations


def _accumulate(name: str, op: str):
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        if out is not None:
            raise TypeError(f"{where}: out= is not supported")
        a = _prefix_dtype(_array(a, where), op, dtype)
        if axis is None:
            a, axis = reshape(a, (math.prod(shape_of(a)),)), 0
        ax = normalize_axis(axis, len(shape_of(a)), where)
        return _running(a, ax, op)

    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: the running {op} along `axis` (flattened if None)."
    return f


def _prefix_dtype(a: Any, op: str, dtype: Any) -> Any:
    """`a` in the dtype NumPy's running sum or product gives: `dtype` if given, else the
    platform integer for bools and integers (uint64 for unsigned ones), as `sum`'s;
    running extrema keep the dtype."""
    if dtype is not None:
        return to_dtype(a, np.dtype(dtype))
    kind = type_of_value(a).dtype.kind
    if op in ("sum", "prod") and kind in "biu":
        return to_dtype(a, INDEX if kind != "u" else np.dtype(np.uint64))
    return a


def _running(a: Any, axis: int, op: str) -> Any:
    """The running `op` along `axis`; of bools, a sum is a logical or (a running max)
    and a product a logical and (a running min), as NumPy's in bool."""
    if type_of_value(a).dtype.kind == "b":
        op = {"sum": "max", "prod": "min"}.get(op, op)
    if type_of_value(a).dtype.kind == "c" and op in ("max", "min"):
        return _running_pick(a, axis, ew.max if op == "max" else ew.min)
    return cumulative(a, axis, op)


def _running_pick(a: Any, axis: int, op: Any) -> Any:
    """A running maximum (minimum) of complex values, NumPy's maximum.accumulate: a loop
    along `axis` of complex_order.pick, NumPy's maximum of two (its order, its NaNs)."""
    n = shape_of(a)[axis]
    if n == 0:
        return a
    rows = moveaxis(a, axis, 0)
    first = slice_op(rows, (0,) * len(shape_of(rows)), (1,) + shape_of(rows)[1:])
    start = reshape(first, shape_of(rows)[1:])
    ys = scan_flat(lambda _, c, r: ([complex_order.pick(op, c[0], r[0])],) * 2,
                   [start], [rows], length=n)[1]
    return moveaxis(ys, 0, axis)


cumsum = _accumulate("cumsum", "sum")
cumprod = _accumulate("cumprod", "prod")


def _cumulative(name: str, op: str):
    run = _accumulate(name, op)

    def f(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
          include_initial: bool = False) -> Any:
        if axis is None and len(shape_of(as_value(accept(x)))) > 1:
            raise ValueError(f"rune_jit.numpy.{name}: axis must be given for arrays of more "
                             "than one dimension")
        out_ = run(x, axis if axis is not None else 0, dtype)
        if not include_initial:
            return out_
        ax = axis if axis is not None else 0
        shape = list(shape_of(out_))
        ax = normalize_axis(ax, len(shape), name)
        shape[ax] = 1
        first = broadcast_in_dim(np.asarray(0 if op == "sum" else 1, type_of_value(out_).dtype),
                                 tuple(shape), ())
        return concatenate([first, out_], ax)

    f.__name__ = name
    f.__doc__ = f"NumPy 2's {name} (with include_initial=)."
    return f


cumulative_sum = _cumulative("cumulative_sum", "sum")
cumulative_prod = _cumulative("cumulative_prod", "prod")


def accumulate(ufunc_name: str, a: Any, axis: int = 0, dtype: Any = None) -> Any:
    """`np.<ufunc>.accumulate(a, axis)` for add, multiply, maximum and minimum."""
    op = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}.get(ufunc_name)
    if op is None:
        raise TypeError(f"rune_jit: numpy.{ufunc_name}.accumulate has no rule for traced "
                        "values")
    a = _prefix_dtype(_array(a, f"numpy.{ufunc_name}.accumulate"), op, dtype)
    return _running(a, normalize_axis(axis, len(shape_of(a)), "accumulate"), op)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """NumPy's diff: the n-th differences along `axis`."""
    a = _array(a, "rune_jit.numpy.diff")
    ax = normalize_axis(axis, len(shape_of(a)), "rune_jit.numpy.diff")
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        e = as_value(accept(extra)) if extra is not a else a
        if extra is not a and len(shape_of(e)) == 0:
            shape = list(shape_of(a))
            shape[ax] = 1
            e = broadcast_in_dim(e, tuple(shape), ())
        parts.append(e)
    if len(parts) > 1:
        parts = promote(*parts, where="rune_jit.numpy.diff")
        a = concatenate([as_value(p) for p in parts], ax)
    for _ in range(n):
        m = shape_of(a)[ax]
        lo = [0] * len(shape_of(a))
        hi = list(shape_of(a))
        later_lo, earlier_hi = list(lo), list(hi)
        later_lo[ax], earlier_hi[ax] = min(1, m), max(m - 1, 0)  # an empty axis stays empty
        later = slice_op(a, later_lo, hi)
        earlier = slice_op(a, lo, earlier_hi)
        a = ew.ne(later, earlier) if type_of_value(a).dtype.kind == "b" else ew.sub(later, earlier)
    return a


# ------------------------------------------------------------- counting, taking


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None
             ) -> Any:
    """Counts (or sums of `weights`) of each value of the non-negative ints `x`: length
    max(x) + 1 (at least `minlength`) outside a trace; under one, `length=` (static),
    where as in JAX a negative value counts in bin 0 and one past the length is dropped."""
    x = as_value(accept(x, "rune_jit.numpy.bincount"))
    if not _traced(x, weights) and length is None:
        return np.bincount(x, weights, minlength)
    if length is None:
        raise TypeError("rune_jit.numpy.bincount: the length of the result depends on the "
                        "values, which a traced program does not know: give length=")
    if weights is None:
        w = broadcast_in_dim(np.ones((), INDEX), shape_of(x), ())
    else:
        (w,) = promote(weights, where="rune_jit.numpy.bincount")
        w = as_value(w)
        if type_of_value(w).dtype.kind != "f":
            w = to_dtype(w, FLOAT64)
    base = broadcast_in_dim(np.zeros((), type_of_value(w).dtype), (int(length),), ())
    # JAX's rule, where NumPy would raise: a negative value counts in bin 0 (not wrapped
    # to the end, as an index would be), one past the length is dropped
    return scatter(base, [ew.max(to_dtype(x, INDEX), np.int64(0))], w, "add", "drop")


def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
         mode: str = "raise", fill_value: Any = None) -> Any:
    """NumPy's take: elements of `a` (flattened if axis is None) at `indices`; `mode`
    "raise", "wrap" or "clip" for those out of bounds, or JAX's "fill" (`fill_value`,
    by default NaN for floats, the lowest signed or highest unsigned integer, True).

    >>> import numpy as np, rune_jit.numpy as rnp
    >>> rnp.take(np.arange(5.0), np.array([0, 7]), mode="fill").tolist()
    [0.0, nan]
    """
    if out is not None:
        raise TypeError("rune_jit.numpy.take: out= is not supported")
    a = _array(a, "rune_jit.numpy.take")
    idx = as_value(accept(indices, "rune_jit.numpy.take"))
    if axis is None:
        a, axis = reshape(a, (math.prod(shape_of(a)),)), 0
    ax = normalize_axis(axis, len(shape_of(a)), "rune_jit.numpy.take")
    if not shape_of(idx):
        idx = reshape(idx, (1,))
        squeeze = True
    else:
        squeeze = False
    key = (slice(None),) * ax + (idx,)
    if fill_value is None:
        fill_value = default_fill(type_of_value(a).dtype)
    out_ = take_key(a, key, mode, fill_value)
    if squeeze:
        shape = list(shape_of(out_))
        del shape[ax]
        out_ = reshape(out_, tuple(shape))
    return out_


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """NumPy's take_along_axis: arr[..., indices, ...] position by position along axis."""
    arr = _array(arr, "rune_jit.numpy.take_along_axis")
    idx = as_value(accept(indices, "rune_jit.numpy.take_along_axis"))
    if type_of_value(idx).dtype.kind not in "iu":  # NumPy's error: no truncating to ints
        raise IndexError("rune_jit.numpy.take_along_axis: `indices` must be an integer array")
    if axis is None:
        arr, axis = reshape(arr, (math.prod(shape_of(arr)),)), 0
    shape, ishape = shape_of(arr), shape_of(idx)
    if len(ishape) != len(shape):
        raise ValueError("rune_jit.numpy.take_along_axis: indices and arr must have the "
                         "same number of dimensions")
    ax = normalize_axis(axis, len(shape), "rune_jit.numpy.take_along_axis")
    full = tuple(i if d == ax else np.broadcast_shapes((s,), (i,))[0]
                 for d, (s, i) in enumerate(zip(shape, ishape)))
    if full[:ax] + full[ax + 1:] != shape[:ax] + shape[ax + 1:]:  # arr broadcasts too
        arr = broadcast_in_dim(arr, full[:ax] + (shape[ax],) + full[ax + 1:],
                               tuple(range(len(shape))))
    coords = [iota(full, d, INDEX) if d != ax else broadcast_in_dim(
        to_dtype(idx, INDEX), full, tuple(range(len(full)))) for d in range(len(shape))]
    return gather(arr, coords)
