"""Comparisons of whole arrays (isclose, allclose, array_equal, array_equiv, isin) and
selections whose size depends on values (argwhere, one-argument where, extract,
compress). A value-dependent size works outside a trace; under one it takes a static
`size=` (the first `size` results, the rest `fill_value`), as in JAX, or raises a
TypeError that names it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import result_type
from ..trace import Tracer
from . import math as m
from . import reductions as r
from ._core import (accept, as_value, dtype_weak, is_python_scalar, shape_of,
                    to_dtype, weak)
from .arrange import along_axis
from .shapes import ravel, reshape, stack
from .sorting import _size_needed, _traced, flatnonzero, nonzero, take

INDEX = np.dtype(np.int64)


def _arr(x: Any, where: str) -> Any:
    return as_value(accept(x, where))


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
            ) -> Any:
    """NumPy's isclose: |a - b| <= atol + rtol * |b| elementwise, infinities equal to
    themselves, NaNs equal to each other with `equal_nan`.

    >>> print(rnp.isclose(np.array([1.0, 1.1, np.nan]), 1.0))
    [ True False False]
    """
    where = "rune_jit.numpy.isclose"
    x, y = (accept(v, where) for v in (a, b))
    dt, is_weak = dtype_weak(y)
    to = result_type((dt, is_weak), (np.dtype(np.float64), True))
    if is_python_scalar(y):  # NumPy makes a Python int a Python float: still weak
        y = float(y)
    else:
        y = weak(to_dtype(y, to)) if is_weak else to_dtype(y, to)
    close = m.less_equal(m.abs(m.subtract(x, y)), m.add(atol, m.multiply(rtol, m.abs(y))))
    out = m.logical_or(m.logical_and(close, m.isfinite(y)), m.equal(x, y))
    if equal_nan:
        out = m.logical_or(out, m.logical_and(m.isnan(x), m.isnan(y)))
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
             ) -> Any:
    """NumPy's allclose: all of isclose (a 0-d bool array; traced, a traced bool).

    >>> print(rnp.allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9])))
    True
    """
    return r.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """NumPy's array_equal: the same shape and the same elements.

    >>> print(rnp.array_equal(np.array([1, 2]), np.array([1, 2])))
    True
    """
    x, y = (_arr(v, "rune_jit.numpy.array_equal") for v in (a1, a2))
    if shape_of(x) != shape_of(y):
        return np.asarray(False)
    same = m.equal(x, y)
    if equal_nan:
        same = m.logical_or(same, m.logical_and(m.isnan(x), m.isnan(y)))
    return r.all(same)


def array_equiv(a1: Any, a2: Any) -> Any:
    """NumPy's array_equiv: shapes that broadcast together and equal elements.

    >>> print(rnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]])))
    True
    """
    x, y = (_arr(v, "rune_jit.numpy.array_equiv") for v in (a1, a2))
    try:
        np.broadcast_shapes(shape_of(x), shape_of(y))
    except ValueError:
        return np.asarray(False)
    return r.all(m.equal(x, y))


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: str | None = None) -> Any:
    """NumPy's isin: whether each element of `element` is among `test_elements` (a
    result of element's shape; each element is compared with every test element).

    >>> print(rnp.isin(np.array([1, 2, 3]), [2, 5]))
    [False  True False]
    """
    x = _arr(element, "rune_jit.numpy.isin")
    t = ravel(_arr(test_elements, "rune_jit.numpy.isin"))
    s = shape_of(x)
    found = r.any(m.equal(reshape(x, s + (1,)), reshape(t, (1,) * len(s) + shape_of(t))), -1)
    return m.logical_not(found) if invert else found


# ------------------------------------------------------------- value-dependent sizes


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """NumPy's argwhere: the indices of the nonzero elements, one row each (shape
    (N, a.ndim)). Under a trace `size=` is needed (see nonzero).

    >>> print(rnp.argwhere(np.array([[0, 3], [4, 0]])))
    [[0 1]
     [1 0]]
    """
    x = _arr(a, "rune_jit.numpy.argwhere")
    if not shape_of(x):
        return argwhere(reshape(x, (1,)), size=size, fill_value=fill_value)[:, :0]
    if not _traced(x) and size is None:
        return np.argwhere(x)
    _size_needed("argwhere", size)
    return stack(nonzero(x, size=size, fill_value=fill_value), -1)


class _NOTHING:
    """The default of where's x and y: not given (a class, which a code digest names,
    where an `object()` would hide every function calling where from it)."""


def where(condition: Any, x: Any = _NOTHING, y: Any = _NOTHING, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """NumPy's where: with x and y, elements of x where `condition` holds and of y
    elsewhere; with the condition alone, nonzero(condition) (under a trace, give
    `size=`).

    >>> print(rnp.where(np.array([True, False]), 1, 2))
    [1 2]
    >>> print(rnp.where(np.array([0, 5, 7]))[0])
    [1 2]
    """
    if x is _NOTHING and y is _NOTHING:
        if size is None and _traced(condition):
            _size_needed("where (with the condition alone)", None)
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is _NOTHING or y is _NOTHING:
        raise ValueError("rune_jit.numpy.where: either both or neither of x and y should be "
                         "given")
    return m.where(condition, x, y)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0
            ) -> Any:
    """NumPy's extract: the elements of the flattened `arr` where the flattened
    `condition` is nonzero (under a trace, give `size=`; the rest is `fill_value`).

    >>> print(rnp.extract(np.array([1, 0, 1]), np.array([7, 8, 9])))
    [7 9]
    """
    x = ravel(_arr(arr, "rune_jit.numpy.extract"))
    c = ravel(_arr(condition, "rune_jit.numpy.extract"))
    if not _traced(x, c) and size is None:
        return np.extract(c, x)
    _size_needed("extract", size)
    idx = flatnonzero(c, size=size, fill_value=shape_of(x)[0])
    return take(x, idx, mode="fill", fill_value=fill_value)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0) -> Any:
    """NumPy's compress: the slices of `a` along `axis` (flattened if None) where the
    1-d `condition` holds. A concrete condition works under a trace too; a traced one
    needs `size=` (the rest is `fill_value`).

    >>> print(rnp.compress([False, True, True], np.array([[1, 2], [3, 4], [5, 6]]), axis=0))
    [[3 4]
     [5 6]]
    """
    where = "rune_jit.numpy.compress"
    x, ax, n = along_axis(a, axis, where)
    if isinstance(condition, Tracer):
        _size_needed("compress", size)
        c = condition if condition.dtype.kind == "b" else m.not_equal(condition, 0)
        if shape_of(c)[0] > n:
            raise ValueError(f"{where}: condition is longer than the axis ({n})")
        idx = flatnonzero(c, size=size, fill_value=n)
        return take(x, idx, ax, mode="fill", fill_value=fill_value)
    c = np.asarray(condition).astype(bool)
    if c.ndim != 1:
        raise ValueError(f"{where}: condition must be a 1-d array")
    if c.shape[0] > n:
        raise IndexError(f"{where}: index {c.shape[0] - 1} is out of bounds for axis {ax} "
                         f"with size {n}")
    return take(x, np.flatnonzero(c), ax, mode="clip")
