"""Products and solves: dot, matmul, outer, linalg.solve."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..dtypes import complex_dtype
from ..ops import complex_parts as cp
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops.shape import concatenate, reshape, slice_op
from ._core import (accept, as_value, broadcast_shapes, broadcast_to_shape, dtype_weak,
                    promote, shape_of, to_dtype)
from .math import multiply


def _operands(a: Any, b: Any, where: str) -> list:
    return [as_value(x) for x in promote(a, b, where=where)]


def dot(a: Any, b: Any) -> Any:
    a, b = _operands(a, b, "rune_jit.numpy.dot")
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return multiply(a, b)
    cb = max(len(sb) - 2, 0)
    if sa[-1] != sb[cb]:
        raise ValueError(f"rune_jit.numpy.dot: shapes {sa} and {sb} not aligned: "
                         f"{sa[-1]} (dim {len(sa) - 1}) != {sb[cb]} (dim {cb})")
    return la.dot_general(a, b, ((len(sa) - 1,), (cb,)))


def matmul(a: Any, b: Any) -> Any:
    where = "rune_jit.numpy.matmul"
    a, b = _operands(a, b, where)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ValueError(f"{where}: operands must have at least one dimension, "
                         f"got shapes {sa} and {sb}")
    a2 = reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, sb + (1,)) if len(sb) == 1 else b
    sa2, sb2 = shape_of(a2), shape_of(b2)
    if sa2[-1] != sb2[-2]:
        raise ValueError(f"{where}: mismatch in core dimension: shapes {sa} and {sb} "
                         f"({sa2[-1]} != {sb2[-2]})")
    batch, a2, b2 = _broadcast_batch(a2, b2, where)
    out = la.batched_matmul(a2, b2)
    shape = batch + ((sa2[-2],) if len(sa) > 1 else ()) + ((sb2[-1],) if len(sb) > 1 else ())
    return reshape(out, shape)


def _broadcast_batch(a: Any, b: Any, where: str) -> tuple[tuple, Any, Any]:
    """Stacks of matrices broadcast to their common batch shape, and that shape."""
    sa, sb = shape_of(a), shape_of(b)
    batch = broadcast_shapes(sa[:-2], sb[:-2], where=where)
    return (batch, *[x if s[:-2] == batch else broadcast_to_shape(x, batch + s[-2:])
                     for x, s in ((a, sa), (b, sb))])


def outer(a: Any, b: Any) -> Any:
    a, b = _operands(a, b, "rune_jit.numpy.outer")
    ra = reshape(a, (_size(a), 1))
    rb = reshape(b, (1, _size(b)))
    return multiply(ra, rb)


def _size(x: Any) -> int:
    return math.prod(shape_of(x))


def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b; b is [M] or [..., M, K], as in NumPy 2. Complex systems are
    solved as the real system of twice their size that they are (`_complex_solve`)."""
    where = "rune_jit.numpy.linalg.solve"
    # as numpy.linalg: single precision only when both are, double otherwise
    dtypes = [dtype_weak(accept(x, where))[0] for x in (a, b)]
    if np.dtype(np.float16) in dtypes:
        raise TypeError(f"{where}: array type float16 is unsupported in linalg (as in NumPy)")
    single = all(d in (np.float32, np.complex64) for d in dtypes)
    dtype = np.dtype(np.float32 if single else np.float64)
    if any(d.kind == "c" for d in dtypes):
        dtype = complex_dtype(dtype)
    a, b = [as_value(x) for x in promote(a, b, where=where)]
    a, b = [to_dtype(x, dtype) for x in (a, b)]
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(f"{where}: a must be square in its last two axes, got shape {sa}")
    vector = len(sb) == 1
    b2 = reshape(b, sb + (1,)) if vector else b
    sb2 = shape_of(b2)
    if len(sb2) < 2 or sb2[-2] != sa[-1]:
        raise ValueError(f"{where}: b of shape {sb} does not match a of shape {sa}")
    batch, a2, b2 = _broadcast_batch(a, b2, where)
    x = _complex_solve(a2, b2) if dtype.kind == "c" else la.solve(a2, b2)
    return reshape(x, batch + (sa[-1],)) if vector else x


def _complex_solve(a: Any, b: Any) -> Any:
    """(ar + i ai)(xr + i xi) = br + i bi as [[ar, -ai], [ai, ar]] [xr; xi] = [br; bi]:
    the real solve's LU and derivatives, with twice the rows (the embedding is singular
    exactly when a is, and as well conditioned). Its rounding is not LAPACK's zgesv's."""
    ar, ai, br, bi = cp.real(a), cp.imag(a), cp.real(b), cp.imag(b)
    n = shape_of(a)[-1]
    nd = len(shape_of(a))
    big = concatenate([concatenate([ar, ew.neg(ai)], nd - 1), concatenate([ai, ar], nd - 1)],
                      nd - 2)
    x = la.solve(big, concatenate([br, bi], nd - 2))
    sx = shape_of(x)
    lo, hi = (0,) * nd, sx
    xr = slice_op(x, lo, sx[:-2] + (n, sx[-1]))
    xi = slice_op(x, lo[:-2] + (n, 0), hi)
    return cp.complex_(xr, xi)
