"""Reductions with NumPy's axis, keepdims and result dtypes."""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable

import numpy as np

from ..dtypes import check_supported
from ..ops import reduce as red
from ..ops.shape import reshape
from . import complex_order, fast
from ._core import as_value, normalize_axes, normalize_axis, promote, shape_of, to_dtype
from .math import _as_bool, divide

INT64, UINT64 = np.dtype(np.int64), np.dtype(np.uint64)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _keep(y: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return y
    return reshape(y, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _reduction(name: str, op: Callable, widen_ints: bool, ufunc: np.ufunc) -> Callable:
    """NumPy's `name`; `ufunc.reduce` is what the primitive `op` computes (its fast path)."""
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        (a,) = promote(a, where=where)
        a = as_value(a)
        if dtype is not None:
            a = to_dtype(a, check_supported(np.dtype(dtype), where))
        elif widen_ints and a.dtype.kind in "iub":
            # NumPy sums integers and bools in the platform int (unsigned ones in uint64)
            a = to_dtype(a, UINT64 if a.dtype.kind == "u" else INT64)
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape), where)
        return _keep(op(a, axes), shape, axes, keepdims)

    f.__name__ = name
    return fast.reduction(f, ufunc)


sum = _reduction("sum", red.reduce_sum, True, np.add)  # noqa: A001
prod = _reduction("prod", red.reduce_prod, True, np.multiply)


def _extremum(name: str, op: Callable, ufunc: np.ufunc, skip_nan: bool = False) -> Callable:
    """max or min; with `skip_nan`, complex values' NaNs are skipped (nanmax's fold; real
    values' NaNs are statistics.py's to fill)."""
    where = f"rune_jit.numpy.{'nan' if skip_nan else ''}{name}"

    def f(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        (a,) = promote(a, where=where)
        a = as_value(a)
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape), where)
        if builtins.any(shape[i] == 0 for i in axes):
            raise ValueError(f"{where}: zero-size array to reduction operation {name} "
                             "which has no identity")
        if a.dtype.kind == "c":  # NumPy's order of complex values (complex_order.py)
            return _keep(complex_order.extremum(a, axes, name == "max", skip_nan), shape,
                         axes, keepdims)
        return _keep(op(a, axes), shape, axes, keepdims)

    f.__name__ = name
    return f if skip_nan else fast.reduction(f, ufunc)


max = _extremum("max", red.reduce_max, np.maximum)  # noqa: A001
min = _extremum("min", red.reduce_min, np.minimum)  # noqa: A001
amax, amin = max, min
# the folds of nanmax and nanmin (statistics.py)
max_skipping_nan = _extremum("max", red.reduce_max, np.maximum, skip_nan=True)
min_skipping_nan = _extremum("min", red.reduce_min, np.minimum, skip_nan=True)


def _truth(name: str, op, empty: bool):
    """all (min over bools) and any (max): an empty reduction gives `empty`."""
    where = f"rune_jit.numpy.{name}"

    def f(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        b = _as_bool(a)
        shape = shape_of(b)
        axes = normalize_axes(axis, len(shape), where)
        if builtins.any(shape[i] == 0 for i in axes):
            kept = tuple(n for i, n in enumerate(shape) if i not in axes)
            return _keep(np.full(kept, empty), shape, axes, keepdims)
        return _keep(op(b, axes), shape, axes, keepdims)

    f.__name__ = name
    return f


all = _truth("all", red.reduce_min, True)  # noqa: A001
any = _truth("any", red.reduce_max, False)  # noqa: A001


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    (a,) = promote(a, where="rune_jit.numpy.mean")
    a = as_value(a)
    if dtype is None and a.dtype.kind not in "fc":
        dtype = np.float64
    # NumPy's mean of float16 sums and divides in float32, then rounds to float16
    half = (a.dtype if dtype is None else np.dtype(dtype)) == F16
    s = sum(a, axis, dtype=F32 if half else dtype, keepdims=keepdims)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape), "rune_jit.numpy.mean")
    count = math.prod([shape[i] for i in axes])
    out = divide(s, count)
    return to_dtype(out, F16) if half else out


def _arg(name: str, op: Callable, skip_nan: bool = False) -> Callable:
    """argmax or argmin; with `skip_nan`, complex values' NaNs are skipped (nanargmax's
    fold)."""
    where = f"rune_jit.numpy.{'nan' if skip_nan else ''}{name}"

    def f(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        (a,) = promote(a, where=where)
        a = as_value(a)
        shape = shape_of(a)
        arg = op
        if a.dtype.kind == "c":  # NumPy's order of complex values (complex_order.py)
            arg = lambda x, ax: complex_order.arg_extremum(x, ax, name == "argmax",  # noqa
                                                           skip_nan)
        if axis is None:
            out = arg(reshape(a, (math.prod(shape),)), 0)
            return reshape(out, (1,) * len(shape)) if keepdims else out
        ax = normalize_axis(axis, len(shape), where)
        if shape[ax] == 0:
            raise ValueError(f"{where}: attempt to get {name} of an empty sequence")
        return _keep(arg(a, ax), shape, (ax,), keepdims)

    f.__name__ = name
    return f


argmax = _arg("argmax", red.argmax)
argmin = _arg("argmin", red.argmin)
argmax_skipping_nan = _arg("argmax", red.argmax, skip_nan=True)  # nanargmax's fold
argmin_skipping_nan = _arg("argmin", red.argmin, skip_nan=True)
