"""Creation and diagonals composed of other functions: empty, empty_like, identity,
logspace, geomspace, meshgrid, tri, tril, triu, copy, atleast_1d/2d/3d, diag, diagflat,
diagonal, trace. Sizes are static (the bounds of logspace and geomspace are concrete)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import check_supported
from ..ops.shape import slice_op
from ..trace import Tracer
from . import math as mt
from . import reductions as r
from ._core import accept, as_value, normalize_axis, shape_of, strong
from .creation import eye, zeros, zeros_like
from .shapes import broadcast_to, concatenate, moveaxis, reshape


def _arr(x: Any, where: str) -> Any:
    return as_value(accept(x, where))


def empty(shape: Any, dtype: Any = None, order: str = "C") -> Any:
    """NumPy's empty; here filled with zeros (there is no uninitialized memory to see).

    >>> print(rnp.empty(2))
    [0. 0.]
    """
    return zeros(shape, dtype)


def empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None) -> Any:
    """NumPy's empty_like; here zeros_like (of `shape`, if given).

    >>> print(rnp.empty_like(np.array([1, 2])))
    [0 0]
    """
    if shape is None:
        return zeros_like(prototype, dtype)
    return zeros(shape, dtype if dtype is not None else _arr(prototype, "empty_like").dtype)


def identity(n: int, dtype: Any = None) -> Any:
    """NumPy's identity: the n x n identity matrix.

    >>> print(rnp.identity(2, dtype=int))
    [[1 0]
     [0 1]]
    """
    return eye(n, dtype=dtype)


def _concrete(x: Any, where: str) -> Any:
    if isinstance(x, Tracer):
        x._concrete(where)
    return x


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """NumPy's logspace: base ** linspace(start, stop, num) (concrete bounds).

    >>> print(rnp.logspace(0, 2, 3))
    [  1.  10. 100.]
    """
    where = "rune_jit.numpy.logspace (its bounds must be concrete)"
    out = np.logspace(*[_concrete(v, where) for v in (start, stop)], num, endpoint,
                      _concrete(base, where), dtype, axis)
    check_supported(out.dtype, "rune_jit.numpy.logspace")
    return out


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """NumPy's geomspace: numbers spaced evenly on a log scale (concrete bounds).

    >>> print(rnp.geomspace(1, 1000, 4))
    [   1.   10.  100. 1000.]
    """
    where = "rune_jit.numpy.geomspace (its bounds must be concrete)"
    out = np.geomspace(_concrete(start, where), _concrete(stop, where), num, endpoint, dtype,
                       axis)
    check_supported(out.dtype, "rune_jit.numpy.geomspace")
    return out


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> tuple:
    """NumPy's meshgrid: coordinate arrays from 1-d coordinate vectors (`indexing` "xy":
    Cartesian, "ij": matrix; `sparse` keeps length-one axes instead of broadcasting).

    >>> xs, ys = rnp.meshgrid(np.array([1, 2, 3]), np.array([7, 8]))
    >>> print(xs); print(ys)
    [[1 2 3]
     [1 2 3]]
    [[7 7 7]
     [8 8 8]]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("rune_jit.numpy.meshgrid: valid values for `indexing` are 'xy' and "
                         "'ij'")
    xs = [reshape(_arr(x, "rune_jit.numpy.meshgrid"), (-1,)) for x in xi]
    n = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * n
        shape[i] = shape_of(x)[0]
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(reshape(x, tuple(shape)))
    if sparse:
        return tuple(out)
    full = np.broadcast_shapes(*[shape_of(o) for o in out])
    return tuple(broadcast_to(o, full) for o in out)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> Any:
    """NumPy's tri: ones at and below the k-th diagonal.

    >>> print(rnp.tri(2, 3, dtype=int))
    [[1 0 0]
     [1 1 0]]
    """
    return np.tri(N, M, k, check_supported(np.dtype(dtype), "rune_jit.numpy.tri"))


def _triangle(name: str, lower: bool):
    def f(m: Any, k: int = 0) -> Any:
        x = _arr(m, f"rune_jit.numpy.{name}")
        s = shape_of(x)
        if not s:
            raise ValueError(f"rune_jit.numpy.{name}: input must be at least 1-d")
        rows, cols = (s[-2], s[-1]) if len(s) > 1 else (s[-1], s[-1])
        keep = np.tri(rows, cols, k if lower else k - 1, dtype=bool)
        return mt.where(keep if lower else ~keep, x, np.zeros((), x.dtype))

    f.__name__ = f.__qualname__ = name
    return f


tril = _triangle("tril", True)
triu = _triangle("triu", False)
tril.__doc__ = """NumPy's tril: zeros above the k-th diagonal (of the last two axes).

    >>> print(rnp.tril(np.ones((2, 2), int)))
    [[1 0]
     [1 1]]
    """
triu.__doc__ = """NumPy's triu: zeros below the k-th diagonal (of the last two axes).

    >>> print(rnp.triu(np.ones((2, 2), int)))
    [[1 1]
     [0 1]]
    """


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """NumPy's copy. A traced value is immutable: its copy is itself.

    >>> print(rnp.copy([1, 2]))
    [1 2]
    """
    x = _arr(a, "rune_jit.numpy.copy")
    return strong(x) if isinstance(x, Tracer) else np.array(x, copy=True)


def _atleast(n: int):
    def fix(x: Any) -> Any:
        x = _arr(x, f"rune_jit.numpy.atleast_{n}d")
        s = shape_of(x)
        if len(s) >= n:
            return x
        if n == 3 and len(s) == 1:
            return reshape(x, (1,) + s + (1,))
        if n == 3 and len(s) == 2:
            return reshape(x, s + (1,))
        return reshape(x, (1,) * (n - len(s)) + s)

    def f(*arys: Any) -> Any:
        out = tuple(fix(a) for a in arys)
        return out[0] if len(out) == 1 else out

    f.__name__ = f.__qualname__ = f"atleast_{n}d"
    return f


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)
atleast_1d.__doc__ = """NumPy's atleast_1d: 0-d arrays as 1-d (one result per argument).

    >>> print(rnp.atleast_1d(3.0))
    [3.]
    """
atleast_2d.__doc__ = """NumPy's atleast_2d: (N,) as (1, N), 0-d as (1, 1).

    >>> print(rnp.atleast_2d(np.array([1, 2])).shape)
    (1, 2)
    """
atleast_3d.__doc__ = """NumPy's atleast_3d: (N,) as (1, N, 1), (M, N) as (M, N, 1).

    >>> print(rnp.atleast_3d(np.array([1, 2])).shape)
    (1, 2, 1)
    """


# ------------------------------------------------------------- diagonals


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """NumPy's diagonal: the `offset` diagonal of the (axis1, axis2) planes, as a last
    axis (a strided slice of the flattened planes).

    >>> print(rnp.diagonal(np.arange(9).reshape(3, 3), 1))
    [1 5]
    """
    where = "rune_jit.numpy.diagonal"
    x = _arr(a, where)
    nd = len(shape_of(x))
    if nd < 2:
        raise ValueError(f"{where}: diag requires an array of at least two dimensions")
    a1, a2 = normalize_axis(axis1, nd, where), normalize_axis(axis2, nd, where)
    if a1 == a2:
        raise ValueError(f"{where}: axis1 and axis2 cannot be the same")
    x = moveaxis(x, (a1, a2), (-2, -1))
    *rest, n1, n2 = shape_of(x)
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    flat = reshape(x, tuple(rest) + (n1 * n2,))
    start = offset if offset >= 0 else -offset * n2
    if length == 0:
        start = 0
    stop = start + (length - 1) * (n2 + 1) + 1 if length else 0
    nr = len(rest)
    return slice_op(flat, (0,) * nr + (start,), tuple(rest) + (stop,), (1,) * nr + (n2 + 1,))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """NumPy's trace: the sum along the `offset` diagonal.

    >>> print(rnp.trace(np.arange(9).reshape(3, 3)))
    12
    """
    if out is not None:
        raise TypeError("rune_jit.numpy.trace: out= is not supported")
    return r.sum(diagonal(a, offset, axis1, axis2), -1, dtype=dtype)


def diag(v: Any, k: int = 0) -> Any:
    """NumPy's diag: the k-th diagonal of a 2-d array, or a 2-d array with a 1-d one on
    its k-th diagonal.

    >>> print(rnp.diag(np.array([1, 2]), 1))
    [[0 1 0]
     [0 0 2]
     [0 0 0]]
    """
    where = "rune_jit.numpy.diag"
    x = _arr(v, where)
    s = shape_of(x)
    if len(s) == 2:
        return diagonal(x, k)
    if len(s) != 1:
        raise ValueError(f"{where}: input must be 1- or 2-d")
    n = s[0] + abs(k)
    padded = concatenate([x, np.zeros((abs(k),), x.dtype)]) if k else x
    along = reshape(padded, (n, 1) if k >= 0 else (1, n))
    return mt.where(eye(n, k=k, dtype=bool), along, np.zeros((), x.dtype))


def diagflat(v: Any, k: int = 0) -> Any:
    """NumPy's diagflat: diag of the flattened input.

    >>> print(rnp.diagflat(np.array([[1, 2]])))
    [[1 0]
     [0 2]]
    """
    return diag(reshape(_arr(v, "rune_jit.numpy.diagflat"), (-1,)), k)



# ------------------------------------------------------------- conversions and indices


def _as_array(name: str):
    def f(a: Any, dtype: Any = None) -> Any:
        from .creation import asarray

        return asarray(a, dtype)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""NumPy's {name}: asarray (memory layout is not observable here).

    >>> print(rnp.{name}([1, 2]))
    [1 2]
    """
    return f


asanyarray = _as_array("asanyarray")
ascontiguousarray = _as_array("ascontiguousarray")
asfortranarray = _as_array("asfortranarray")


def iscomplexobj(x: Any) -> bool:
    """NumPy's iscomplexobj: whether x has a complex dtype (traced values too).

    >>> rnp.iscomplexobj(np.ones(2)), rnp.iscomplexobj(np.ones(2) * 1j)
    (False, True)
    """
    if isinstance(x, Tracer):
        return x.dtype.kind == "c"
    return bool(np.iscomplexobj(x))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """NumPy's tril_indices: the (row, column) indices at and below the k-th diagonal.

    >>> [i.tolist() for i in rnp.tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    return np.tril_indices(n, k, m)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """NumPy's triu_indices: the (row, column) indices at and above the k-th diagonal.

    >>> [i.tolist() for i in rnp.triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return np.triu_indices(n, k, m)
