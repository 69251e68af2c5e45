"""Statistics composed of reductions: var, std, the nan* reductions, count_nonzero,
average, ptp, cov, corrcoef. Signatures are NumPy's (an `out=` given is a TypeError:
results are new arrays); dtypes are NumPy's (integers and bools give float64)."""

from __future__ import annotations

import math as _math
from typing import Any, Callable

import numpy as np

from ..dtypes import check_supported
from ..trace import Tracer
from . import math as mt
from . import reductions as r
from ..ops import complex_parts as cp
from ._core import accept, as_value, each_part, normalize_axes, promote, shape_of, to_dtype

FLOAT64 = np.dtype(np.float64)


def _array(a: Any, where: str) -> Any:
    (a,) = promote(a, where=where)
    return as_value(a)


def _no_out(out: Any, where: str) -> None:
    if out is not None:
        raise TypeError(f"{where}: out= is not supported (results are new arrays)")


def _float_input(a: Any, dtype: Any, where: str) -> Any:
    """`a` in the dtype a moment is computed in: `dtype`, else float64 for integers and
    bools (NumPy's rule for mean, var and std), else its own."""
    a = _array(a, where)
    if dtype is not None:
        return to_dtype(a, check_supported(np.dtype(dtype), where))
    return to_dtype(a, FLOAT64) if a.dtype.kind in "biu" else a


def _count(shape: tuple, axes: tuple) -> int:
    return _math.prod(shape[i] for i in axes)


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, correction: Any = None) -> Any:
    """NumPy's var: the mean squared deviation from the mean along `axis`, divided by
    N - ddof (`correction=` is the array API's name for ddof).

    >>> print(rnp.var(np.array([1.0, 2.0, 3.0, 4.0]), ddof=1).round(4))
    1.6667
    """
    where = "rune_jit.numpy.var"
    _no_out(out, where)
    ddof = correction if correction is not None else ddof
    a = _float_input(a, dtype, where)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), where)
    mean = mt.divide(r.sum(a, axes, keepdims=True), _count(shape, axes))
    mean = to_dtype(mean, a.dtype)
    d = mt.subtract(a, mean)
    if a.dtype.kind == "c":  # |d|², real, as NumPy's var of complex values
        d = mt.abs(d)
    ss = r.sum(mt.multiply(d, d), axes, keepdims=keepdims)
    return to_dtype(mt.divide(ss, max(_count(shape, axes) - ddof, 0)), d.dtype)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, correction: Any = None) -> Any:
    """NumPy's std: the square root of var.

    >>> print(rnp.std(np.array([1.0, 3.0])))
    1.0
    """
    return mt.sqrt(var(a, axis, dtype, out, ddof, keepdims, correction=correction))


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """NumPy's ptp: max - min along `axis` ("peak to peak").

    >>> print(rnp.ptp(np.array([4, 9, 2])))
    7
    """
    _no_out(out, "rune_jit.numpy.ptp")
    a = _array(a, "rune_jit.numpy.ptp")
    if a.dtype.kind == "b":
        raise TypeError("rune_jit.numpy.ptp: boolean subtract is not supported (as in NumPy)")
    return mt.subtract(r.max(a, axis, keepdims=keepdims), r.min(a, axis, keepdims=keepdims))


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """NumPy's count_nonzero (an int64 array, also for axis=None).

    >>> print(rnp.count_nonzero(np.array([[0, 1, 7], [0, 0, 3]]), axis=1))
    [2 1]
    """
    return r.sum(mt._as_bool(as_value(accept(a, "rune_jit.numpy.count_nonzero"))), axis,
                 keepdims=keepdims)


# ------------------------------------------------------------- the nan* reductions


def _not_nan(a: Any) -> Any:
    return mt.logical_not(mt.isnan(a))


def _filled(a: Any, value: float) -> Any:
    """`a` with its NaNs replaced by `value` (integers have none)."""
    return mt.where(mt.isnan(a), np.asarray(value, a.dtype), a) if a.dtype.kind in "fc" else a


def _nan_fold(name: str, fold: Callable, fill: float, empty_is_nan: bool,
              complex_fold: Callable | None = None) -> Callable:
    """A nan* form of `fold`: NaNs count as `fill` (the fold's identity); with
    `empty_is_nan`, a slice of NaNs only gives NaN (nanmax, nanmin). Complex values go
    to `complex_fold` if given (NumPy's order, NaNs skipped)."""
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False) -> Any:
        _no_out(out, where)
        a = _array(a, where)
        if complex_fold is not None and a.dtype.kind == "c":
            return complex_fold(a, axis, keepdims=keepdims)
        kw = {} if empty_is_nan else {"dtype": dtype}
        got = fold(_filled(a, fill), axis, keepdims=keepdims, **kw)
        if not empty_is_nan or a.dtype.kind != "f":
            return got
        all_nan = r.all(mt.isnan(a), axis, keepdims=keepdims)
        return mt.where(all_nan, np.asarray(np.nan, a.dtype), got)

    f.__name__ = f.__qualname__ = name
    return f


nansum = _nan_fold("nansum", r.sum, 0.0, False)
nanprod = _nan_fold("nanprod", r.prod, 1.0, False)
_nanmax = _nan_fold("nanmax", r.max, -np.inf, True, r.max_skipping_nan)
_nanmin = _nan_fold("nanmin", r.min, np.inf, True, r.min_skipping_nan)
nansum.__doc__ = """NumPy's nansum: the sum, NaNs counted as zero.

    >>> print(rnp.nansum(np.array([1.0, np.nan, 2.0])))
    3.0
    """
nanprod.__doc__ = """NumPy's nanprod: the product, NaNs counted as one.

    >>> print(rnp.nanprod(np.array([3.0, np.nan, 2.0])))
    6.0
    """


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """NumPy's nanmax: the maximum of the values that are not NaN (NaN for a slice of
    NaNs only).

    >>> print(rnp.nanmax(np.array([1.0, np.nan, 2.0])))
    2.0
    """
    return _nanmax(a, axis, None, out, keepdims)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """NumPy's nanmin: the minimum of the values that are not NaN.

    >>> print(rnp.nanmin(np.array([1.0, np.nan, 2.0])))
    1.0
    """
    return _nanmin(a, axis, None, out, keepdims)


def _nan_moments(a: Any, axis: Any, dtype: Any, keepdims: bool, where: str):
    """(a in its float dtype, the mask of its non-NaN values, their count kept as
    reduced axes of length one, the axes)."""
    a = _float_input(a, dtype, where)
    axes = normalize_axes(axis, len(shape_of(a)), where)
    keep = _not_nan(a)
    count = to_dtype(r.sum(keep, axes, keepdims=True), a.dtype)
    return a, keep, count, axes


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """NumPy's nanmean: the mean of the values that are not NaN (NaN for a slice of
    NaNs only).

    >>> print(rnp.nanmean(np.array([1.0, np.nan, 2.0])))
    1.5
    """
    where = "rune_jit.numpy.nanmean"
    _no_out(out, where)
    a, keep, count, axes = _nan_moments(a, axis, dtype, keepdims, where)
    total = r.sum(_filled(a, 0.0), axes, keepdims=True)
    return _unkeep(mt.divide(total, count), axes, keepdims)


def _unkeep(x: Any, axes: tuple, keepdims: bool) -> Any:
    from .shapes import squeeze

    return x if keepdims or not axes else squeeze(x, axes)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, correction: Any = None) -> Any:
    """NumPy's nanvar: var of the values that are not NaN (NaN where fewer than
    ddof + 1 are).

    >>> print(rnp.nanvar(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    where = "rune_jit.numpy.nanvar"
    _no_out(out, where)
    ddof = correction if correction is not None else ddof
    if _array(a, where).dtype.kind in "biu":  # no NaNs: NumPy's nanvar is var
        return var(a, axis, dtype, None, ddof, keepdims)
    a, keep, count, axes = _nan_moments(a, axis, dtype, keepdims, where)
    mean = mt.divide(r.sum(_filled(a, 0.0), axes, keepdims=True), count)
    d = mt.where(keep, mt.subtract(a, mean), np.zeros((), a.dtype))
    re, im = cp.parts(d)  # |d|² as NumPy's (d * conj(d)).real, real for complex values
    squares = mt.add(mt.multiply(re, re), mt.multiply(im, im)) if a.dtype.kind == "c" else \
        mt.multiply(d, d)
    real = squares.dtype
    dof = mt.subtract(to_dtype(cp.parts(count)[0], real), np.asarray(ddof, real))
    out_ = mt.divide(r.sum(squares, axes, keepdims=True), dof)
    out_ = mt.where(mt.less_equal(dof, 0), np.asarray(np.nan, real), out_)
    return _unkeep(out_, axes, keepdims)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, correction: Any = None) -> Any:
    """NumPy's nanstd: the square root of nanvar.

    >>> print(rnp.nanstd(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    return mt.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, correction=correction))


def _nan_arg(name: str, fold: Callable, fill: float, complex_fold: Callable) -> Callable:
    """nanargmax, nanargmin: NaNs count as `fill` (complex values go to `complex_fold`,
    which skips them); a slice of NaNs only is NumPy's ValueError outside a trace, and
    -1 (JAX's answer) under one."""
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: int | None = None, out: Any = None, *, keepdims: bool = False) -> Any:
        _no_out(out, where)
        a = _array(a, where)
        if a.dtype.kind == "c":
            got = complex_fold(a, axis, keepdims=keepdims)
        else:
            got = fold(_filled(a, fill), axis, keepdims=keepdims)
        if a.dtype.kind not in "fc":
            return got
        all_nan = r.any(r.all(mt.isnan(a), axis, keepdims=keepdims))
        if not isinstance(all_nan, Tracer) and not isinstance(a, Tracer) and all_nan:
            raise ValueError(f"{where}: all-NaN slice encountered")
        return mt.where(r.all(mt.isnan(a), axis, keepdims=keepdims), -1, got)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""NumPy's {name}: the index of the {name[6:]}imum of the values that are not
    NaN (a slice of NaNs only: ValueError, or -1 under a trace).

    >>> print(rnp.{name}(np.array([np.nan, 2.0, 1.0])))
    {1 if name == "nanargmax" else 2}
    """
    return f


nanargmax = _nan_arg("nanargmax", r.argmax, -np.inf, r.argmax_skipping_nan)
nanargmin = _nan_arg("nanargmin", r.argmin, np.inf, r.argmin_skipping_nan)


def _nan_running(name: str, fill: float) -> Callable:
    def f(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        from .sorting import cumprod, cumsum

        a = _array(a, f"rune_jit.numpy.{name}")
        return (cumsum if fill == 0.0 else cumprod)(_filled(a, fill), axis, dtype, out)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""NumPy's {name}: the running {name[6:]} along `axis`, NaNs counted as
    {int(fill)}.

    >>> print(rnp.{name}(np.array([2.0, np.nan, 3.0])))
    {"[2. 2. 5.]" if fill == 0.0 else "[2. 2. 6.]"}
    """
    return f


nancumsum = _nan_running("nancumsum", 0.0)
nancumprod = _nan_running("nancumprod", 1.0)


# ------------------------------------------------------------- weighted


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """NumPy's average: the mean along `axis`, weighted by `weights` (of a's shape, or
    1-d along a single `axis`); with `returned`, also the sum of the weights.

    >>> print(rnp.average(np.array([1.0, 2.0, 4.0]), weights=np.array([1, 1, 2])))
    2.75
    """
    where = "rune_jit.numpy.average"
    a = as_value(accept(a, where))
    shape = shape_of(a)
    axes = None if axis is None else normalize_axes(axis, len(shape), where)
    if weights is None:
        avg = r.mean(a, axes, keepdims=keepdims)
        kept = _math.prod(shape_of(avg))
        if not kept:  # as NumPy, which divides the sizes
            raise ZeroDivisionError(f"{where}: the average of no slices (size 0)")
        scl = np.asarray(_math.prod(shape) / kept, avg.dtype)
    else:
        w = _weights(as_value(accept(weights, where)), shape, axes, where)
        dt = np.result_type(a.dtype, w.dtype, *(["f8"] if a.dtype.kind in "biu" else []))
        scl = r.sum(w, axes, dtype=dt, keepdims=keepdims)
        if not isinstance(scl, Tracer) and np.any(scl == 0.0):
            raise ZeroDivisionError(f"{where}: weights sum to zero, can't be normalized")
        total = r.sum(mt.multiply(to_dtype(a, dt), to_dtype(w, dt)), axes, keepdims=keepdims)
        avg = mt.divide(total, scl)
    if not returned:
        return avg
    from .shapes import broadcast_to

    return avg, broadcast_to(scl, shape_of(avg))


def _weights(w: Any, shape: tuple, axes: Any, where: str) -> Any:
    """Weights as NumPy checks them, reshaped to broadcast against a."""
    ws = shape_of(w)
    if ws == shape:
        return w
    if axes is None:
        raise TypeError(f"{where}: axis must be specified when shapes of a and weights differ")
    if len(ws) != len(axes):
        raise TypeError(f"{where}: shape of weights must be consistent with shape of a "
                        "along specified axis")
    if ws != tuple(shape[i] for i in sorted(axes)) and ws != tuple(shape[i] for i in axes):
        raise ValueError(f"{where}: shape of weights must be consistent with shape of a "
                         "along specified axis")
    from .shapes import reshape, transpose

    w = transpose(w, tuple(np.argsort(axes)))
    return reshape(w, tuple(s if i in axes else 1 for i, s in enumerate(shape)))


# ------------------------------------------------------------- covariance


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """NumPy's cov: the covariance matrix of the variables (rows of `m`, columns if not
    `rowvar`), with y's variables after m's; squeezed as NumPy's (one variable: 0-d).

    >>> print(rnp.cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    from .products import dot
    from .shapes import concatenate, squeeze, transpose

    where = "rune_jit.numpy.cov"
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"{where}: ddof must be integer")
    xs = [as_value(accept(v, where)) for v in ((m,) if y is None else (m, y))]
    if any(len(shape_of(v)) > 2 for v in xs):
        raise ValueError(f"{where}: m and y must have at most 2 dimensions")
    dt = check_supported(np.dtype(dtype) if dtype is not None else np.result_type(
        *[v.dtype for v in xs], FLOAT64), where)
    rows = []
    for i, v in enumerate(xs):
        v2 = _as_2d(to_dtype(v, dt))
        flip = (len(shape_of(v)) != 1) if i == 0 else shape_of(v2)[0] != 1
        rows.append(transpose(v2) if not rowvar and flip else v2)
    if shape_of(rows[0])[0] == 0:
        return np.array([]).reshape(0, 0)
    x = concatenate(rows, 0) if len(rows) > 1 else rows[0]
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    w = _cov_weights(fweights, aweights, shape_of(x)[1], where)
    avg, w_sum = average(x, 1, w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = max(shape_of(x)[1] - ddof, 0)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = mt.subtract(w_sum, ddof)
    else:
        a_w = to_dtype(as_value(accept(aweights)), FLOAT64)
        fact = mt.subtract(w_sum, mt.divide(mt.multiply(ddof, r.sum(mt.multiply(w, a_w))), w_sum))
    if not isinstance(fact, int):
        fact = mt.where(mt.less_equal(fact, 0), np.zeros((), dt), to_dtype(fact, dt))
    centered = mt.subtract(x, avg[:, None])
    weighted = centered if w is None else mt.multiply(centered, w)
    if dt.kind == "c":  # NumPy's: with the conjugate
        weighted = cp.conj(weighted)
    c = dot(centered, transpose(weighted))
    return squeeze(mt.multiply(c, mt.divide(np.ones((), dt), fact)))


def _as_2d(v: Any) -> Any:
    from .shapes import reshape

    s = shape_of(v)
    return reshape(v, (1,) * (2 - len(s)) + s) if len(s) < 2 else v


def _cov_weights(fweights: Any, aweights: Any, n: int, where: str) -> Any:
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        g = to_dtype(as_value(accept(given, where)), FLOAT64)
        if len(shape_of(g)) > 1:
            raise RuntimeError(f"{where}: cannot handle multidimensional {name}")
        if shape_of(g)[0] != n:
            raise RuntimeError(f"{where}: incompatible numbers of samples and {name}")
        if not isinstance(g, Tracer):
            if name == "fweights" and not np.all(g == np.around(g)):
                raise TypeError(f"{where}: fweights must be integer")
            if np.any(g < 0):
                raise ValueError(f"{where}: {name} cannot be negative")
        w = g if w is None else mt.multiply(w, g)
    return w


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """NumPy's corrcoef: cov normalized by the standard deviations, clipped to [-1, 1]
    (complex values: sqrt of the diagonal's real part, each part clipped, as NumPy's).

    >>> print(rnp.corrcoef(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, -1.0])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if not shape_of(c):
        return mt.divide(c, c)
    from .shapes import reshape
    from .arrays import diagonal

    d = mt.sqrt(cp.parts(diagonal(c))[0])  # (the real part: NumPy's, of complex values)
    n = shape_of(d)[0]
    c = mt.divide(mt.divide(c, reshape(d, (n, 1))), reshape(d, (1, n)))
    clip = lambda part: mt.clip(part, -1, 1)  # noqa: E731
    return each_part(clip, c) if c.dtype.kind == "c" else clip(c)
