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
from ..ops.sort import cumulative, sort as sort_last
from ..trace import Tracer, current, type_of_value
from ._core import accept, as_value, normalize_axis, promote, shape_of, to_dtype
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
    before = ew.lt if side == "left" else ew.le
    for _ in range(max(n, 1).bit_length()):  # invariant: a[:lo] goes before v, a[hi:] not
        mid = ew.floor_divide(ew.add(lo, hi), np.asarray(2, INDEX))
        at = gather(a, [ew.min(mid, np.asarray(n - 1, INDEX))], "clip")
        go_right = ew.logical_and(ew.lt(mid, hi), before(at, v))
        lo = ew.select(go_right, ew.add(mid, np.asarray(1, INDEX)), lo)
        hi = ew.select(go_right, hi, mid)
    return lo


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
    flat = reshape(ew.ne(a, np.zeros((), type_of_value(a).dtype)), (math.prod(shape),))
    rank = ew.sub(cumulative(ew.convert(flat, INDEX), 0), np.asarray(1, INDEX))
    slot = ew.select(flat, rank, np.asarray(n, INDEX))  # the others land past the end
    fill = np.zeros((), INDEX) if fill_value is None else np.asarray(fill_value, INDEX)
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
    firsts = concatenate([broadcast_in_dim(np.asarray(True), (1,), ()),
                          ew.ne(slice_op(values, (1,), (m,)), slice_op(values, (0,), (m - 1,)))],
                         0)
    rank = ew.sub(cumulative(ew.convert(firsts, INDEX), 0), np.asarray(1, INDEX))
    slot = ew.select(firsts, rank, np.asarray(n, INDEX))
    fill = (slice_op(values, (0,), (1,)) if fill_value is None
            else broadcast_in_dim(np.asarray(fill_value, type_of_value(a).dtype), (1,), ()))
    base = broadcast_in_dim(reshape(fill, ()), (n,), ())
    return scatter(base, [slot], values, "set", "drop")


# ------------------------------------------------------------- order statistics

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, nan: bool = False) -> Any:
    """The q-th quantiles of `a` along `axis` (NumPy's default method "linear"; also
    "lower", "higher", "nearest", "midpoint"). `q` is a number or an array of them
    (its axes come first in the result, as NumPy's). The derivative flows through the
    sorting permutation, to the one or two elements each quantile is made of."""
    if out is not None:
        raise TypeError("rune_jit.numpy.quantile: out= is not supported")
    if method not in METHODS:
        raise ValueError(f"rune_jit.numpy.quantile: method must be one of {METHODS}, got "
                         f"{method!r}")
    a = _array(a, "rune_jit.numpy.quantile")
    if type_of_value(a).dtype.kind != "f":
        a = to_dtype(a, FLOAT64)
    shape = shape_of(a)
    values, _, ax = _sorted(a, axis, "rune_jit.numpy.quantile")
    dt = type_of_value(values).dtype
    q = to_dtype(as_value(accept(q, "rune_jit.numpy.quantile")), dt)
    n = shape_of(values)[-1]
    count = _valid_count(values, n, nan)
    result = _interpolate(values, q, count, method, dt)
    # NumPy: a NaN in a row makes its quantiles NaN; nan* forms: a row of NaNs only
    rows = len(shape_of(values)) - 1
    from ..ops.reduce import reduce_max

    bad = (ew.eq(count, np.zeros((), dt)) if nan else
           reduce_max(ew.isnan(values), (rows,)) if n else np.asarray(True))
    bad = broadcast_in_dim(bad, shape_of(result), tuple(range(len(shape_of(result)) - rows,
                                                             len(shape_of(result))))) \
        if shape_of(bad) else bad
    result = ew.select(bad, broadcast_in_dim(np.asarray(np.nan, dt), shape_of(result), ()),
                       result) if shape_of(result) else ew.select(bad, np.asarray(np.nan, dt),
                                                                  result)
    return _keep_q(result, shape, axis, keepdims, len(shape_of(q)))


def _valid_count(values: Any, n: int, nan: bool) -> Any:
    """The number of values each row's quantile reads: all, or the non-NaN ones (sorted
    last) for the nan* forms."""
    dt = type_of_value(values).dtype
    if not nan:
        return np.asarray(n, dt)
    from ..ops.reduce import reduce_sum

    rows = len(shape_of(values)) - 1
    return reduce_sum(ew.convert(ew.logical_not(ew.isnan(values)), dt), (rows,))


def _interpolate(values: Any, q: Any, count: Any, method: str, dt: np.dtype) -> Any:
    """Each row's value at position q * (count - 1) of its sorted values."""
    rows = shape_of(values)[:-1]
    qs = shape_of(q)
    full = qs + rows
    qb = broadcast_in_dim(q, full, tuple(range(len(qs))))
    cb = broadcast_in_dim(count, full, tuple(range(len(qs), len(full)))) if shape_of(
        count) else count
    pos = ew.mul(qb, ew.sub(cb, np.ones((), dt)))
    lo = ew.floor_divide(pos, np.ones((), dt))
    hi = ew.min(ew.add(lo, np.ones((), dt)), ew.max(ew.sub(cb, np.ones((), dt)),
                                                     np.zeros((), dt)))
    frac = ew.sub(pos, lo)
    if method == "lower":
        hi, frac = lo, ew.mul(frac, np.zeros((), dt))
    elif method == "higher":
        lo = ew.select(ew.gt(frac, np.zeros((), dt)), hi, lo)
        frac = ew.mul(frac, np.zeros((), dt))
    elif method == "nearest":  # NumPy rounds half to even
        pick_hi = ew.logical_or(ew.gt(frac, np.asarray(0.5, dt)), ew.logical_and(
            ew.eq(frac, np.asarray(0.5, dt)), ew.ne(ew.remainder(lo, np.asarray(2.0, dt)),
                                                    np.zeros((), dt))))
        lo = ew.select(pick_hi, hi, lo)
        frac = ew.mul(frac, np.zeros((), dt))
    elif method == "midpoint":
        frac = ew.select(ew.gt(frac, np.zeros((), dt)), np.asarray(0.5, dt), np.zeros((), dt))
    at_lo, at_hi = _row_read(values, lo, qs), _row_read(values, hi, qs)
    return ew.add(at_lo, ew.mul(frac, ew.sub(at_hi, at_lo)))


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


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False) -> Any:
    """quantile of q / 100."""
    q = ew.div(to_dtype(as_value(accept(q)), FLOAT64), np.asarray(100.0)) if isinstance(
        q, Tracer) else np.asarray(q, np.float64) / 100.0
    return quantile(a, q, axis, out, overwrite_input, method, keepdims)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    return quantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """quantile of the values that are not NaN (all-NaN rows give NaN)."""
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, nan=True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    return nanquantile(a, np.asarray(q, np.float64) / 100.0, axis, out, overwrite_input,
                       method, keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    return nanquantile(a, 0.5, axis, out, overwrite_input, "linear", keepdims)


# ------------------------------------------------------------- prefix operations


def _accumulate(name: str, op: str):
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        if out is not None:
            raise TypeError(f"{where}: out= is not supported")
        a = _array(a, where)
        if dtype is not None:
            a = to_dtype(a, np.dtype(dtype))
        elif type_of_value(a).dtype.kind in "biu":  # NumPy's platform int, as sum's
            a = to_dtype(a, INDEX if type_of_value(a).dtype.kind != "u" else np.dtype(np.uint64))
        if axis is None:
            a, axis = reshape(a, (math.prod(shape_of(a)),)), 0
        ax = normalize_axis(axis, len(shape_of(a)), where)
        return cumulative(a, ax, op)

    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: the running {op} along `axis` (flattened if None)."
    return f


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
    a = _array(a, f"numpy.{ufunc_name}.accumulate")
    if dtype is not None:
        a = to_dtype(a, np.dtype(dtype))
    return cumulative(a, normalize_axis(axis, len(shape_of(a)), "accumulate"), op)


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
        later_lo[ax], earlier_hi[ax] = 1, max(m - 1, 0)
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
    coords = [iota(full, d, INDEX) if d != ax else broadcast_in_dim(
        to_dtype(idx, INDEX), full, tuple(range(len(full)))) for d in range(len(shape))]
    return gather(arr, coords)
