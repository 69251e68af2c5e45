"""More of jax.scipy.linalg (re-exported by rune_jit.scipy.linalg): solve, qr, lu,
lu_factor / lu_solve, det, inv, eigh, svd, expm, and the structured matrices
(block_diag, toeplitz, circulant, hankel). Built on rune_jit.numpy.linalg and the
decomposition primitives, so they compile, batch and differentiate as those do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy as rnp
from .numpy import linalg as nla
from .numpy._core import accept, shape_of
from .ops import decomp as dc
from .control_flow import iterate
from .scipy.linalg import _operands, _square, _with_rhs, cho_factor, cho_solve, triangular

ASSUME = ("gen", "sym", "her", "pos")


def _name(fn: str) -> str:
    return f"rune_jit.scipy.linalg.{fn}"


def _from_triangle(a: Any, lower: bool) -> Any:
    """The symmetric matrix whose lower (upper) triangle is a's."""
    n = shape_of(a)[-1]
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    half = rnp.where(keep, a, 0.0)
    return half + rnp.swapaxes(half, -1, -2) - rnp.where(np.eye(n, dtype=bool), a, 0.0)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """x with a x = b, b [n] or [n, k] (a stack [..., n, n] broadcast with b's batch).
    assume_a "gen": LU; "sym" (symmetric) and "her" (Hermitian: the conjugate, and the
    diagonal's real part): a matrix read from its lower (`lower`) or upper triangle;
    "pos": Cholesky, as SciPy's.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.solve(np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([9.0, 8.0])))
    [2. 3.]
    """
    del overwrite_a, overwrite_b, debug, check_finite
    where = _name("solve")
    if assume_a not in ASSUME:
        raise ValueError(f"{where}: assume_a must be one of {ASSUME}, got {assume_a!r}")
    a, b = _operands(where, a, b)
    _square(a, where)
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    if assume_a == "her":
        a = nla._symmetric(a, lower)
    elif assume_a == "sym":
        a = _from_triangle(a, lower)
    a2, b2, vector = _with_rhs(a, b, where)
    x = rnp.linalg.solve(a2, b2)
    return x[..., 0] if vector else x


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple:
    """a = Q R as SciPy's: mode "full" (Q [m, m], R [m, n]), "economic" (Q [m, k],
    R [k, n], k = min(m, n)) or "r" (the tuple (R,)). Column pivoting is not provided.

    >>> import rune_jit.scipy as rsp
    >>> q, r = rsp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> print(np.round(np.abs(r), 6))
    [[5.  2.2]
     [0.  0.4]]
    """
    del overwrite_a, lwork, check_finite
    where = _name("qr")
    if pivoting:
        raise NotImplementedError(f"{where}: pivoting=True is not provided")
    modes = {"full": "complete", "economic": "reduced", "r": "complete"}
    if mode not in modes:
        raise ValueError(f"{where}: mode must be 'full', 'economic' or 'r', got {mode!r}")
    q, r = nla.qr(a, mode=modes[mode])
    return (r,) if mode == "r" else (q, r)


def _permutation(pivots: Any, n: int) -> Any:
    """The row order perm (a[perm] = L U) from LAPACK's swaps: row j with pivots[j]."""
    idx = np.arange(n)
    perm = rnp.broadcast_to(idx, shape_of(pivots))
    for j in range(n):
        pj = pivots[..., j:j + 1]
        at_j, at_p = perm[..., j:j + 1], rnp.take_along_axis(perm, pj, axis=-1)
        perm = rnp.where(idx == j, at_p, rnp.where(idx == pj, at_j, perm))
    return perm


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv): L (unit diagonal, below) and U in one matrix, and LAPACK's row swaps
    (int32, as JAX's), for lu_solve.

    >>> import rune_jit.scipy as rsp
    >>> lu, piv = rsp.linalg.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> print(np.round(lu, 6), piv)
    [[3.       4.      ]
     [0.333333 0.666667]] [1 1]
    """
    del overwrite_a, check_finite
    where = _name("lu_factor")
    (a,) = _operands(where, a)
    _square(a, where)
    lu, pivots, _ = dc.lu(a)
    return lu, rnp.astype(pivots, np.int32)


def lu_solve(lu_and_piv: tuple, b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with a x = b (trans 0), aᵀ x = b (1) or aᴴ x = b (2), given lu_factor(a).

    >>> import rune_jit.scipy as rsp
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> print(np.round(rsp.linalg.lu_solve(rsp.linalg.lu_factor(a), np.array([5.0, 11.0])), 6))
    [1. 2.]
    """
    del overwrite_b, check_finite
    where = _name("lu_solve")
    if trans not in (0, 1, 2):
        raise ValueError(f"{where}: trans must be 0, 1 or 2, got {trans!r}")
    lu, piv = lu_and_piv
    lu, b = _operands(where, lu, b)
    _square(lu, where)
    lu2, b2, vector = _with_rhs(lu, b, where)
    n = shape_of(lu)[-1]
    perm = _permutation(rnp.astype(rnp.asarray(accept(piv, where)), np.int64), n)
    perm = rnp.broadcast_to(perm, shape_of(b2)[:-2] + (n,))
    if trans == 0:
        y = rnp.take_along_axis(b2, perm[..., None], axis=-2)
        y = dc.triangular_solve(lu2, y, lower=True, unit_diagonal=True)
        x = dc.triangular_solve(lu2, y, lower=False)
    else:
        op = "T" if trans == 1 else "C"
        y = triangular(lu2, b2, False, op)
        z = triangular(lu2, y, True, op, unit_diagonal=True)
        x = rnp.take_along_axis(z, rnp.argsort(perm, axis=-1)[..., None], axis=-2)
    return x[..., 0] if vector else x


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple:
    """(p, l, u) with a = p l u (or (p l, u) with `permute_l`), as SciPy's.

    >>> import rune_jit.scipy as rsp
    >>> p, l, u = rsp.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> print(p)
    [[0. 1.]
     [1. 0.]]
    """
    del overwrite_a, check_finite
    where = _name("lu")
    (a,) = _operands(where, a)
    _square(a, where)
    packed, _, perm = dc.lu(a)
    n = shape_of(a)[-1]
    eye = np.eye(n, dtype=bool)
    lower = rnp.where(eye, 1.0, rnp.tril(packed, -1))
    upper = rnp.triu(packed)
    p = rnp.astype(rnp.expand_dims(perm, -2) == np.arange(n)[:, None], lower.dtype)
    return (p @ lower, upper) if permute_l else (p, lower, upper)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant (numpy.linalg.det's).

    >>> import rune_jit.scipy as rsp
    >>> print(round(float(rsp.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]]))), 6))
    -2.0
    """
    return nla.det(a)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse (numpy.linalg.inv's).

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])))
    [[0.5  0.  ]
     [0.   0.25]]
    """
    return nla.inv(a)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian (symmetric) a read from its
    lower (`lower`) or upper triangle; the generalized problem (b) is not provided.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True))
    [1. 3.]
    """
    where = _name("eigh")
    if b is not None or eigvals is not None:
        raise NotImplementedError(f"{where}: the generalized problem (b) and eigvals= are "
                                  "not provided")
    w, v = nla.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """a = U diag(s) Vh (numpy.linalg.svd's).

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False))
    [4. 3.]
    """
    return nla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


# ------------------------------------------------------------- the exponential

PADE13 = [64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
          1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
          33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0]
THETA13 = 5.371920351148152  # Higham's bound on |A|_1 for the degree-13 Padé


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """exp(A) by scaling and squaring with the degree-13 Padé approximant (Higham 2005),
    as jax.scipy.linalg.expm (NaN when more than `max_squarings` squarings are needed).

    >>> import rune_jit.scipy as rsp
    >>> print(np.round(rsp.linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]])), 6))
    [[1. 1.]
     [0. 1.]]
    """
    del upper_triangular
    where = _name("expm")
    (a,) = _operands(where, A)
    _square(a, where)
    n = shape_of(a)[-1]
    norm = rnp.max(rnp.sum(rnp.abs(a), axis=-2), axis=-1)
    squarings = rnp.maximum(0.0, rnp.ceil(rnp.log2(rnp.maximum(norm, 1e-300) / THETA13)))
    scale = rnp.exp2(-squarings)[..., None, None]
    x = _pade13(a * scale, n)
    target = rnp.minimum(squarings, max_squarings)

    def square(state):  # each matrix of a stack squared as often as its own norm says
        m, k = state
        more = k < target
        return rnp.where(more[..., None, None], m @ m, m), rnp.where(more, k + 1, k)

    out, _ = iterate(square, (x, 0.0 * squarings), until=lambda s: rnp.all(s[1] >= target),
                     max_steps=max_squarings + 1)
    return rnp.where((squarings > max_squarings)[..., None, None], np.nan, out)


def _pade13(a: Any, n: int) -> Any:
    b = PADE13
    eye = np.eye(n, dtype=a.dtype)  # (a float64 identity would promote float32 values)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    return rnp.linalg.solve(v - u, v + u)


# ------------------------------------------------------------- structured matrices


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the given matrices (scalars and vectors are 1 x 1
    and 1 x n blocks, as SciPy's).

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.block_diag(np.array([[1.0, 2.0]]), 3.0))
    [[1. 2. 0.]
     [0. 0. 3.]]
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = [rnp.atleast_2d(rnp.asarray(accept(x, _name("block_diag")))) for x in arrs]
    if any(len(shape_of(x)) > 2 for x in blocks):
        raise ValueError(f"{_name('block_diag')}: arguments must be at most 2-D, got shapes "
                         f"{[shape_of(x) for x in blocks]}")
    cols = sum(shape_of(x)[1] for x in blocks)
    rows, start = [], 0
    for x in blocks:
        k = shape_of(x)[1]
        rows.append(rnp.pad(x, ((0, 0), (start, cols - start - k))))
        start += k
    return rnp.concatenate(rows, axis=0)


def _vector(v: Any, where: str, name: str) -> Any:
    v = rnp.asarray(accept(v, where))
    if len(shape_of(v)) < 1:
        raise ValueError(f"{where}: {name} must have at least one axis, got a scalar")
    return v


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column c and first row r (r = c if not given;
    r[0] is ignored). Leading axes of c and r are batch axes, as JAX's.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0])))
    [[1. 4.]
     [2. 1.]
     [3. 2.]]
    """
    where = _name("toeplitz")
    c = _vector(c, where, "c")
    r = c if r is None else _vector(r, where, "r")
    m, n = shape_of(c)[-1], shape_of(r)[-1]
    batch = np.broadcast_shapes(shape_of(c)[:-1], shape_of(r)[:-1])
    c, r = rnp.broadcast_to(c, batch + (m,)), rnp.broadcast_to(r, batch + (n,))
    values = rnp.concatenate([rnp.flip(r[..., 1:], -1), c], axis=-1)  # r[n-1..1], c[0..]
    index = (n - 1) + np.arange(m)[:, None] - np.arange(n)[None, :]
    return values[..., index]


def circulant(c: Any) -> Any:
    """The circulant matrix whose first column is c (leading axes batch).

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.circulant(np.array([1.0, 2.0, 3.0])))
    [[1. 3. 2.]
     [2. 1. 3.]
     [3. 2. 1.]]
    """
    c = _vector(c, _name("circulant"), "c")
    n = shape_of(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column c and last row r (zeros if not given;
    r[0] is ignored), as SciPy's.

    >>> import rune_jit.scipy as rsp
    >>> print(rsp.linalg.hankel(np.array([1.0, 2.0, 3.0])))
    [[1. 2. 3.]
     [2. 3. 0.]
     [3. 0. 0.]]
    """
    where = _name("hankel")
    c = rnp.ravel(_vector(c, where, "c"))
    r = rnp.zeros_like(c) if r is None else rnp.ravel(_vector(r, where, "r"))
    m, n = shape_of(c)[0], shape_of(r)[0]
    values = rnp.concatenate([c, r[1:]])
    return values[np.arange(m)[:, None] + np.arange(n)[None, :]]


__all__ = ["block_diag", "circulant", "det", "eigh", "expm", "hankel", "inv", "lu",
           "lu_factor", "lu_solve", "qr", "solve", "svd", "toeplitz"]
