"""The implementation of rune_jit.scipy.linalg (its docstring is the public module's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy._core import accept, as_value, broadcast_shapes, dtype_weak, shape_of, to_dtype
from ..ops import complex_parts as cp
from ..ops import decomp as dc
from ..ops import elementwise as ew
from ..ops.shape import broadcast_in_dim, reshape

__all__ = ["cho_factor", "cho_solve", "cholesky", "solve_triangular"]

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def _operands(where: str, *xs: Any) -> list:
    """As SciPy's LAPACK wrappers: single precision when all are float32 or complex64,
    complex when any is, else float64."""
    xs = [accept(x, where) for x in xs]
    dtypes = [dtype_weak(x)[0] for x in xs]
    if F16 in dtypes:
        raise TypeError(f"{where}: array type float16 is unsupported")
    single = all(d in (F32, C64) for d in dtypes)
    if any(d.kind == "c" for d in dtypes):
        dtype = C64 if single else C128
    else:
        dtype = F32 if single else F64
    return [to_dtype(as_value(x), dtype) for x in xs]


def triangular(a: Any, b: Any, lower: bool, op: str, unit_diagonal: bool = False) -> Any:
    """x with op(a) x = b, a triangular: op "N" (a), "T" (its transpose) or "C" (its
    conjugate transpose: A^H x = b is A^T conj(x) = conj(b))."""
    if op == "C" and dc.is_complex(a):
        return cp.conj(dc.triangular_solve(a, cp.conj(b), lower=lower, transpose_a=True,
                                           unit_diagonal=unit_diagonal))
    return dc.triangular_solve(a, b, lower=lower, transpose_a=op != "N",
                               unit_diagonal=unit_diagonal)


def _square(a: Any, where: str) -> None:
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{where}: expected square matrix, got shape {s}")


def _with_rhs(a: Any, b: Any, where: str):
    """a [..., n, n] and b as [..., n, k], broadcast to one batch shape; whether b was a
    vector [n]."""
    sa, sb = shape_of(a), shape_of(b)
    n = sa[-1]
    vector = len(sb) == 1
    b2 = reshape(b, sb + (1,)) if vector else b
    sb2 = shape_of(b2)
    if len(sb2) < 2 or sb2[-2] != n:
        raise ValueError(f"{where}: shapes of a {sa} and b {sb} are incompatible")
    batch = broadcast_shapes(sa[:-2], sb2[:-2], where=where)

    def stretch(x, s):
        return x if s[:-2] == batch else broadcast_in_dim(
            x, batch + s[-2:], tuple(range(len(batch) + 2 - len(s), len(batch) + 2)))

    return stretch(a, sa), stretch(b2, sb2), vector


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """x with op(a) x = b for a triangular a (only its lower or upper triangle is read,
    and with `unit_diagonal` not its diagonal); trans 0 ("N"): op(a) = a, 1 ("T"): its
    transpose, 2 ("C"): its conjugate transpose. A zero on the diagonal raises
    LinAlgError. Linear in b; differentiable in a too.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]),
    ...                                   np.array([2.0, 3.0]), lower=True))
    [1. 2.]
    """
    del overwrite_b, check_finite
    where = "rune_jit.scipy.linalg.solve_triangular"
    codes = {0: "N", "N": "N", 1: "T", "T": "T", 2: "C", "C": "C"}
    if trans not in codes:
        raise ValueError(f"{where}: trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    a, b = _operands(where, a, b)
    _square(a, where)
    a2, b2, vector = _with_rhs(a, b, where)
    x = triangular(a2, b2, lower, codes[trans], unit_diagonal)
    return reshape(x, shape_of(x)[:-1]) if vector else x


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """SciPy's Cholesky factor: upper (a = U^H U) unless `lower` (a = L L^H), read from
    that triangle of a (Hermitian, or symmetric if real). Not positive definite:
    LinAlgError.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])))
    [[2. 1.]
     [0. 2.]]
    """
    del overwrite_a, check_finite
    where = "rune_jit.scipy.linalg.cholesky"
    (a,) = _operands(where, a)
    _square(a, where)
    from ..numpy.linalg import cholesky as np_cholesky

    return np_cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple:
    """(c, lower): c holds the Cholesky factor in its lower (upper) triangle and a's
    entries in the other, as SciPy's; for cho_solve.

    >>> import rune_jit.scipy as rsp
    >>> c, low = rsp.linalg.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
    >>> print(c, low)
    [[2. 1.]
     [2. 2.]] False
    """
    del overwrite_a, check_finite
    where = "rune_jit.scipy.linalg.cho_factor"
    (a,) = _operands(where, a)
    _square(a, where)
    factor = cholesky(a, lower=lower)
    n = shape_of(a)[-1]
    mask = np.tri(n, dtype=bool) if lower else ~np.tri(n, k=-1, dtype=bool)
    return ew.select(dc._matrix_const(a, mask), factor, a), bool(lower)


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """x with A x = b, given cho_factor(A).

    >>> import rune_jit.scipy as rsp
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> print(rsp.linalg.cho_solve(rsp.linalg.cho_factor(a), np.array([6.0, 7.0])))
    [1. 1.]
    """
    del overwrite_b, check_finite
    where = "rune_jit.scipy.linalg.cho_solve"
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the first argument must be (c, lower), as cho_factor "
                         "gives") from None
    c, b = _operands(where, c, b)
    _square(c, where)
    c2, b2, vector = _with_rhs(c, b, where)
    # A = L L^H: L^-H L^-1 b; A = U^H U: U^-1 U^-H b
    y = triangular(c2, b2, lower, "N" if lower else "C")
    x = triangular(c2, y, lower, "C" if lower else "N")
    return reshape(x, shape_of(x)[:-1]) if vector else x



# The functions added for jax.scipy.linalg's names live in rune_jit/_src/linalg.py
from ..linalg import (block_diag, circulant, det, eigh, expm, hankel, inv, lu,  # noqa: E402
                      lu_factor, lu_solve, qr, solve, svd, toeplitz)

__all__ += ["block_diag", "circulant", "det", "eigh", "expm", "hankel", "inv", "lu",
            "lu_factor", "lu_solve", "qr", "solve", "svd", "toeplitz"]
