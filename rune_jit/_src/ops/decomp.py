"""Matrix decompositions: cholesky, triangular_solve, lu, eigh, qr, svd, eig.

Each works on the last two axes of its operand; leading axes are a batch, native to the
primitive (the CPU backend loops over it, calling LAPACK), so vmap only moves the lanes
to axis 0. The impls are NumPy's (numpy.linalg, which the backends' results are tested
against); derivatives are the standard ones, as JAX writes them:

- cholesky: L' = L phi(L^-1 A' L^-H), phi = the lower triangle with half the diagonal;
  the operand is taken as Hermitian (the NumPy layer builds it from one triangle).
- triangular_solve: linear in b; x' = op(A)^-1 (b' - op(A') x), A' masked to the
  triangle that is read.
- lu: L' and U' from L^-1 P A' U^-1 (its strictly lower part and its upper part).
- eigh: w' = re diag(V^H A' V), V' = V (F * V^H A' V), F_ij = 1 / (w_j - w_i) off the
  diagonal (complex V: the derivative of the vectors whose V^H V' has a zero diagonal, as
  JAX's; the phase LAPACK gives each vector is not differentiated, so only functions that
  do not depend on it have a meaningful gradient). With repeated eigenvalues the
  eigenvectors are not unique and F is infinite: their tangents are then inf or NaN (the
  eigenvalues' stay right), as in JAX.
- qr: for m >= n, reduced (as JAX: j-towns.github.io/papers/qr-derivative.pdf).
- svd: reduced (or square), the same construction as eigh's with
  F_ij = 1 / (s_j^2 - s_i^2); repeated or zero singular values give inf or NaN in
  U' and V' (not in s'). Complex: JAX's rule (its extra term for the imaginary part of
  U^H A' V's diagonal).
- eig: w' = diag(V^-1 A' V); V' = V (F * V^-1 A' V) + V diag(c), c keeping geev's
  normalization (unit columns, the largest component real), as JAX's rule with
  enable_eigvec_derivs (JAX refuses V' by default; repeated eigenvalues give inf or NaN).

Complex operands (complex64, complex128) take the same rules with conjugate transposes;
eigenvalues of eigh and singular values are real.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ad_util import Zero, is_undefined
from ..dtypes import complex_dtype, real_dtype
from ..ir import Type
from ..primitive import NOT_LINEAR, Absent, Primitive
from ..trace import bind, bind1, type_of_value
from . import complex_parts as cp
from . import elementwise as ew
from .linalg import batched_matmul as mm
from .linalg import matrix_transpose as mT
from .reduce import argmax, reduce_sum
from .shape import broadcast_in_dim, materialize
from .tangents import instantiate

cholesky_p = Primitive("cholesky", traits=frozenset({"costly"}))
triangular_solve_p = Primitive("triangular_solve", traits=frozenset({"costly"}))
lu_p = Primitive("lu", traits=frozenset({"costly"}))
eigh_p = Primitive("eigh", traits=frozenset({"costly"}))
qr_p = Primitive("qr", traits=frozenset({"costly"}))
svd_p = Primitive("svd", traits=frozenset({"costly"}))

LAPACK_DTYPES = tuple(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))


def _check_float(name: str, *types: Type) -> None:
    if any(t.dtype != types[0].dtype for t in types) or types[0].dtype not in LAPACK_DTYPES:
        raise TypeError(f"{name}: operands {', '.join(map(str, types))} must have one dtype, "
                        "float32, float64, complex64 or complex128")


def _check_square(name: str, a: Type) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: {a} is not a stack of square matrices [..., n, n]")


def _batch_all(prim: Primitive):
    def rule(size, args, dims, **params):
        outs = bind(prim, *[materialize(a, d, size) for a, d in zip(args, dims)], **params)
        return outs, [0] * len(outs)
    return rule


# ------------------------------------------------------------- helpers (traceable)

def is_complex(x: Any) -> bool:
    return type_of_value(x).dtype.kind == "c"


def mH(x: Any) -> Any:
    """x's conjugate transpose over its last two axes (its transpose if x is real)."""
    return cp.conj(mT(x)) if is_complex(x) else mT(x)


def real_part(x: Any) -> Any:
    """x's real part (x itself if real), in x's dtype."""
    return ew.convert(cp.real(x), type_of_value(x).dtype) if is_complex(x) else x


def like(x: Any, other: Any) -> Any:
    """x (real) in other's dtype (complex when other is)."""
    return ew.convert(x, type_of_value(other).dtype)


def _matrix_const(x: Any, value: np.ndarray) -> Any:
    """A constant [n, m] matrix broadcast over x's leading axes, in x's dtype (a bool
    matrix stays bool)."""
    t = type_of_value(x)
    shape = t.shape[:-2] + value.shape
    value = value if value.dtype == bool else np.asarray(value, t.dtype)
    return broadcast_in_dim(value, shape, (len(shape) - 2, len(shape) - 1))


def tri(x: Any, lower: bool, k: int = 0) -> Any:
    """x's lower (upper) triangle from diagonal k (k < 0: below the diagonal)."""
    t = type_of_value(x)
    n, m = t.shape[-2:]
    mask = np.tri(n, m, k) if lower else 1 - np.tri(n, m, k - 1)
    return ew.mul(x, _matrix_const(x, mask))


def eye_like(x: Any) -> Any:
    """The identity, broadcast over x's leading axes."""
    return _matrix_const(x, np.eye(type_of_value(x).shape[-1]))


def diagonal(x: Any) -> Any:
    """[..., n, n] -> [..., n]."""
    t = type_of_value(x)
    return reduce_sum(ew.mul(x, eye_like(x)), (t.ndim - 1,))


def row_vector(v: Any, like: Any) -> Any:
    """v [..., n] as v[..., None, :] broadcast to like's shape [..., m, n]."""
    t = type_of_value(like)
    return broadcast_in_dim(v, t.shape, tuple(range(t.ndim - 2)) + (t.ndim - 1,))


def col_vector(v: Any, like: Any) -> Any:
    """v [..., m] as v[..., :, None] broadcast to like's shape [..., m, n]."""
    t = type_of_value(like)
    return broadcast_in_dim(v, t.shape, tuple(range(t.ndim - 2)) + (t.ndim - 2,))


def _reciprocal_gaps(w: Any, like: Any) -> Any:
    """F with F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it (w in like's dtype):
    the eigenvector derivatives' weights."""
    eye = eye_like(like)
    diff = ew.add(ew.sub(row_vector(w, like), col_vector(w, like)), eye)
    return ew.sub(ew.div(ew.const(1.0, diff), diff), eye)


def _square_matrix(v: Any) -> Any:
    """A zero [..., n, n] of v's [..., n] dtype, for row_vector/col_vector to shape."""
    t = type_of_value(v)
    return broadcast_in_dim(np.zeros((), t.dtype), t.shape + t.shape[-1:], ())


# ------------------------------------------------------------- cholesky

@cholesky_p.def_rule("shape")
def _cholesky_shape(a: Type) -> list[Type]:
    _check_float("cholesky", a)
    _check_square("cholesky", a)
    return [a]


@cholesky_p.def_rule("impl")
def _cholesky_impl(a):
    return [np.linalg.cholesky(a)]  # raises LinAlgError: Matrix is not positive definite


def cholesky(a: Any) -> Any:
    """L lower with a = L L^H; a is read as Hermitian (symmetric if real) from its lower
    triangle."""
    return bind1(cholesky_p, a)


@cholesky_p.def_rule("jvp")
def _cholesky_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    L = cholesky(a)
    if isinstance(ta, Zero):
        return [L], [Zero(type_of_value(L))]
    y = triangular_solve(L, ta, lower=True)  # L^-1 A'
    z = triangular_solve(L, mH(y), lower=True)  # L^-1 A'^H L^-H (A' Hermitian)
    n = type_of_value(a).shape[-1]
    phi = ew.mul(z, _matrix_const(z, np.tri(n) - 0.5 * np.eye(n)))
    return [L], [mm(L, phi)]


cholesky_p.def_rule("transpose", NOT_LINEAR)
cholesky_p.def_rule("batch", _batch_all(cholesky_p))


# ------------------------------------------------------------- triangular_solve

@triangular_solve_p.def_rule("shape")
def _trisolve_shape(a: Type, b: Type, *, lower, transpose_a, unit_diagonal) -> list[Type]:
    _check_float("triangular_solve", a, b)
    _check_square("triangular_solve", a)
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ValueError(f"triangular_solve: cannot solve {a} x = {b}; b must be [..., n, k]")
    return [b]


def _op_a(a, *, lower, transpose_a, unit_diagonal):
    """The matrix the solve really uses: the triangle read, unit diagonal, transposed."""
    n = a.shape[-1]
    keep = np.tri(n, dtype=bool) if lower else ~np.tri(n, k=-1, dtype=bool)
    if unit_diagonal:
        keep &= ~np.eye(n, dtype=bool)
    m = np.where(keep, a, 0) + (np.eye(n, dtype=a.dtype) if unit_diagonal else 0)
    return np.swapaxes(m, -1, -2) if transpose_a else m


@triangular_solve_p.def_rule("impl")
def _trisolve_impl(a, b, *, lower, transpose_a, unit_diagonal):
    m = _op_a(a, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    if b.size == 0:
        return [np.zeros(b.shape, b.dtype)]
    diag = np.diagonal(m, axis1=-2, axis2=-1)
    if np.any(diag == 0):
        raise np.linalg.LinAlgError("rune_jit solve: the matrix is singular")
    return [np.asarray(np.linalg.solve(m, b), b.dtype)]


def triangular_solve(a: Any, b: Any, *, lower: bool, transpose_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """x with op(a) x = b, a triangular: op(a) = a, or a^T if `transpose_a`; only the
    lower (upper) triangle of a is read, and with `unit_diagonal` not its diagonal."""
    return bind1(triangular_solve_p, a, b, lower=bool(lower), transpose_a=bool(transpose_a),
                 unit_diagonal=bool(unit_diagonal))


@triangular_solve_p.def_rule("jvp")
def _trisolve_jvp(primals, tangents, *, lower, transpose_a, unit_diagonal):
    a, b = primals
    ta, tb = tangents
    params = dict(lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    x = triangular_solve(a, b, **params)
    if isinstance(ta, Zero) and isinstance(tb, Zero):
        return [x], [Zero(type_of_value(x))]
    rhs = None if isinstance(tb, Zero) else tb
    if not isinstance(ta, Zero):
        da = tri(ta, lower, -1 if unit_diagonal and lower else (1 if unit_diagonal else 0))
        da = mT(da) if transpose_a else da
        term = ew.neg(mm(da, x))
        rhs = term if rhs is None else ew.add(rhs, term)
    return [x], [triangular_solve(a, rhs, **params)]


@triangular_solve_p.def_rule("transpose")
def _trisolve_transpose(cts, a, b, *, lower, transpose_a, unit_diagonal):
    if is_undefined(a):
        raise NotImplementedError("triangular_solve is linear in b only")
    ct = instantiate(cts[0])
    return [None, triangular_solve(a, ct, lower=lower, transpose_a=not transpose_a,
                                   unit_diagonal=unit_diagonal)]


triangular_solve_p.def_rule("batch", _batch_all(triangular_solve_p))


# ------------------------------------------------------------- lu

@lu_p.def_rule("shape")
def _lu_shape(a: Type) -> list[Type]:
    _check_float("lu", a)
    _check_square("lu", a)
    i64 = np.dtype(np.int64)
    return [a, Type(i64, a.shape[:-1]), Type(i64, a.shape[:-1])]


@lu_p.def_rule("impl")
def _lu_impl(a):
    """LU with partial pivoting, as LAPACK's getrf: a[perm] = L U; pivots are its row
    swaps (row i with row pivots[i], in order). A zero pivot column is skipped."""
    n = a.shape[-1]
    lu = np.array(a, copy=True).reshape((-1, n, n))
    nb = lu.shape[0]
    pivots = np.zeros((nb, n), np.int64)
    perm = np.tile(np.arange(n, dtype=np.int64), (nb, 1))
    rows = np.arange(nb)
    for j in range(n):
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1) if n else np.zeros(nb, np.int64)
        pivots[:, j] = p
        lu[rows, j], lu[rows, p] = lu[rows, p].copy(), lu[rows, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
        piv = lu[:, j, j]
        safe = np.where(piv == 0, 1, piv)
        f = np.where((piv != 0)[:, None], lu[:, j + 1:, j] / safe[:, None], 0)
        lu[:, j + 1:, j] = f
        lu[:, j + 1:, j + 1:] -= f[:, :, None] * lu[:, j, None, j + 1:]
    shape = a.shape[:-1]
    return [lu.reshape(a.shape), pivots.reshape(shape), perm.reshape(shape)]


def lu(a: Any) -> list:
    """[lu, pivots, perm]: a[perm] = L U, L unit lower (below lu's diagonal), U upper."""
    return bind(lu_p, a)


@lu_p.def_rule("jvp")
def _lu_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    lu_, pivots, perm = lu(a)
    outs = [lu_, pivots, perm]
    zeros = [Zero(type_of_value(pivots)), Zero(type_of_value(perm))]
    if isinstance(ta, Zero):
        return outs, [Zero(type_of_value(lu_))] + zeros
    x = mm(_permutation(perm, a), ta)  # P A': row i of A' is row perm[i]
    l_ = ew.add(tri(lu_, True, -1), eye_like(lu_))
    u_ = tri(lu_, False)
    la = triangular_solve(lu_, x, lower=True, unit_diagonal=True)  # L^-1 P A'
    lau = mT(triangular_solve(lu_, mT(la), lower=False, transpose_a=True))  # ... U^-1
    dlu = ew.add(mm(l_, tri(lau, True, -1)), mm(tri(lau, False), u_))
    return outs, [dlu] + zeros


lu_p.def_rule("transpose", NOT_LINEAR)
lu_p.def_rule("batch", _batch_all(lu_p))


# ------------------------------------------------------------- eigh

@eigh_p.def_rule("shape")
def _eigh_shape(a: Type, *, vectors) -> list[Type]:
    _check_float("eigh", a)
    _check_square("eigh", a)
    w = Type(real_dtype(a.dtype), a.shape[:-1])
    return [w, a] if vectors else [w]


@eigh_p.def_rule("impl")
def _eigh_impl(a, *, vectors):
    if vectors:
        w, v = np.linalg.eigh(a, UPLO="L")
        return [w, v]
    return [np.linalg.eigvalsh(a, UPLO="L")]


def eigh(a: Any, vectors: bool = True) -> list:
    """[w, v] (or [w]): eigenvalues (real) in ascending order and eigenvectors (columns)
    of a Hermitian (symmetric) a, read from its lower triangle."""
    return bind(eigh_p, a, vectors=bool(vectors))


@eigh_p.def_rule("jvp")
def _eigh_jvp(primals, tangents, *, vectors):
    (a,), (ta,) = primals, tangents
    w, v = eigh(a, True)
    outs = [w, v] if vectors else [w]
    if isinstance(ta, Zero):
        return outs, [Zero(type_of_value(o)) for o in outs]
    vdv = mm(mH(v), mm(ta, v))
    dw = cp.real(diagonal(vdv)) if is_complex(vdv) else diagonal(vdv)
    if not vectors:
        return outs, [dw]
    dv = mm(v, ew.mul(_reciprocal_gaps(like(w, v), v), vdv))
    return outs, [dw, dv]


eigh_p.def_rule("transpose", NOT_LINEAR)
eigh_p.def_rule("batch", _batch_all(eigh_p))


# ------------------------------------------------------------- qr

@qr_p.def_rule("shape")
def _qr_shape(a: Type, *, full_matrices) -> list[Type]:
    _check_float("qr", a)
    if a.ndim < 2:
        raise ValueError(f"qr: {a} is not a stack of matrices [..., m, n]")
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [Type(a.dtype, a.shape[:-2] + (m, k)), Type(a.dtype, a.shape[:-2] + (k, n))]


@qr_p.def_rule("impl")
def _qr_impl(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [np.asarray(q, a.dtype), np.asarray(r, a.dtype)]


def qr(a: Any, full_matrices: bool = False) -> list:
    """[q, r] with a = q r, q with orthonormal columns, r upper triangular."""
    return bind(qr_p, a, full_matrices=bool(full_matrices))


@qr_p.def_rule("jvp")
def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (ta,) = primals, tangents
    q, r = qr(a, full_matrices)
    if isinstance(ta, Zero):
        return [q, r], [Zero(type_of_value(q)), Zero(type_of_value(r))]
    m, n = type_of_value(a).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("rune_jit: the derivative of qr is defined for m >= n, "
                                  "in mode 'reduced' (as in JAX)")
    dx_rinv = mT(triangular_solve(r, mT(ta), lower=False, transpose_a=True))  # A' R^-1
    qt = mm(mH(q), dx_rinv)
    low = tri(qt, True, -1)
    do = ew.sub(low, mH(low))  # skew-Hermitian
    if is_complex(qt):  # and the imaginary part of Q^H A' R^-1's diagonal, as JAX's
        do = ew.add(do, ew.mul(eye_like(qt), ew.sub(qt, real_part(qt))))
    dq = ew.add(mm(q, ew.sub(do, qt)), dx_rinv)
    dr = mm(ew.sub(qt, do), r)
    return [q, r], [dq, dr]


qr_p.def_rule("transpose", NOT_LINEAR)
qr_p.def_rule("batch", _batch_all(qr_p))


# ------------------------------------------------------------- svd

@svd_p.def_rule("shape")
def _svd_shape(a: Type, *, full_matrices, compute_uv) -> list[Type]:
    _check_float("svd", a)
    if a.ndim < 2:
        raise ValueError(f"svd: {a} is not a stack of matrices [..., m, n]")
    lead, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    s = Type(real_dtype(a.dtype), lead + (k,))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [Type(a.dtype, lead + (m, ku)), s, Type(a.dtype, lead + (kv, n))]


@svd_p.def_rule("impl")
def _svd_impl(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [np.linalg.svd(a, compute_uv=False)]
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return [u, s, vt]


def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> list:
    """[u, s, vt] (or [s]): a = u diag(s) vt, s descending."""
    return bind(svd_p, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


@svd_p.def_rule("jvp")
def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (ta,) = primals, tangents
    outs = svd(a, full_matrices, compute_uv)
    if isinstance(ta, Zero):
        return outs, [Zero(type_of_value(o)) for o in outs]
    m, n = type_of_value(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("rune_jit: the derivative of svd with full_matrices=True "
                                  "is defined for square matrices only (as in JAX)")
    u, s, vt = svd(a, False, True)
    v = mH(vt)
    ds_mat = mm(mH(u), mm(ta, v))  # U^H A' V, [k, k]
    ds = diagonal(ds_mat)
    ds = cp.real(ds) if is_complex(ds) else ds
    if not compute_uv:
        return outs, [ds]
    sc = like(s, u)
    sq = _square_matrix(sc)
    sj, si = row_vector(sc, sq), col_vector(sc, sq)
    eye = eye_like(sq)
    f = ew.sub(ew.div(np.asarray(1.0, type_of_value(a).dtype),
                      ew.add(ew.mul(ew.add(sj, si), ew.sub(sj, si)), eye)), eye)
    dss, sds = ew.mul(sj, ds_mat), ew.mul(si, ds_mat)  # dS diag(s), diag(s) dS
    inner = ew.mul(f, ew.add(dss, mH(dss)))
    if is_complex(ds_mat):  # the imaginary part of dS's diagonal, over s, as JAX's
        inner = ew.add(inner, ew.mul(ew.sub(ds_mat, mH(ds_mat)), _half_inverse_diag(sc, sq)))
    du = mm(u, inner)
    dv = mm(v, ew.mul(f, ew.add(sds, mH(sds))))
    if m > n:
        dav = mm(ta, v)
        du = ew.add(du, ew.div(ew.sub(dav, mm(u, mm(mH(u), dav))), row_vector(sc, dav)))
    if n > m:
        dau = mm(mH(ta), u)
        dv = ew.add(dv, ew.div(ew.sub(dau, mm(v, mm(vt, dau))), row_vector(sc, dau)))
    return outs, [du, ds, mH(dv)]


def _half_inverse_diag(s: Any, sq: Any) -> Any:
    """diag(1 / (2 s)), with 0 where s is 0."""
    zero = ew.convert(ew.eq(s, ew.const(0.0, s)), type_of_value(s).dtype)
    inv = ew.sub(ew.div(ew.const(0.5, s), ew.add(s, zero)), ew.mul(ew.const(0.5, s), zero))
    return ew.mul(row_vector(inv, sq), eye_like(sq))


svd_p.def_rule("transpose", NOT_LINEAR)
svd_p.def_rule("batch", _batch_all(svd_p))



# ------------------------------------------------------------- eig

eig_p = Primitive("eig", traits=frozenset({"costly"}))


@eig_p.def_rule("shape")
def _eig_shape(a: Type, *, vectors) -> list[Type]:
    _check_float("eig", a)
    _check_square("eig", a)
    c = complex_dtype(a.dtype)
    w = Type(c, a.shape[:-1])
    return [w, Type(c, a.shape)] if vectors else [w]


@eig_p.def_rule("impl")
def _eig_impl(a, *, vectors):
    c = complex_dtype(a.dtype)
    if not vectors:
        return [np.linalg.eigvals(a).astype(c)]
    w, v = np.linalg.eig(a)  # LinAlgError: Eigenvalues did not converge
    return [w.astype(c), v.astype(c)]


def eig(a: Any, vectors: bool = True) -> list:
    """[w, v] (or [w]): the eigenvalues and right eigenvectors (columns, unit norm, the
    largest component real, as LAPACK's geev) of a general square a, always complex."""
    return bind(eig_p, a, vectors=bool(vectors))


def lu_solve(a: Any, b: Any) -> Any:
    """x with a x = b, through a's LU factorization (any of LAPACK's dtypes)."""
    lu_, _, perm = lu(a)
    y = triangular_solve(lu_, mm(_permutation(perm, a), b), lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, lower=False)


def _permutation(perm: Any, like: Any) -> Any:
    """The one-hot matrix P with (P x)[i] = x[perm[i]], in like's dtype and shape."""
    t = type_of_value(like)
    cols = broadcast_in_dim(np.arange(t.shape[-1], dtype=np.int64), t.shape, (t.ndim - 1,))
    rows = broadcast_in_dim(perm, t.shape, tuple(range(t.ndim - 1)))
    return ew.convert(ew.eq(rows, cols), t.dtype)


@eig_p.def_rule("jvp")
def _eig_jvp(primals, tangents, *, vectors):
    (a,), (ta,) = primals, tangents
    w, v = eig(a, True)
    outs = [w, v] if vectors else [w]
    if isinstance(ta, Zero):
        return outs, [Zero(type_of_value(o)) for o in outs]
    p = mm(lu_solve(v, like(ta, v)), v)  # V^-1 A' V
    dw = diagonal(p)
    if not vectors:
        return outs, [dw]
    u = mm(v, ew.mul(_reciprocal_gaps(w, v), p))
    return outs, [dw, ew.add(u, ew.mul(v, row_vector(_normalization(v, u), v)))]


def _normalization(v: Any, u: Any) -> Any:
    """c with V' = U + V diag(c) keeping geev's normalization of each column v_j: unit
    norm (Re v_j^H v_j' = 0) and its largest component k_j real (Im v_kj' = 0), as JAX's
    rule: c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj."""
    t = type_of_value(v)
    rows = t.ndim - 2
    k = argmax(ew.abs(v), rows)
    iota = broadcast_in_dim(np.arange(t.shape[-2], dtype=np.int64), t.shape, (rows,))
    mask = ew.convert(ew.eq(iota, broadcast_in_dim(k, t.shape, tuple(
        i for i in range(t.ndim) if i != rows))), t.dtype)
    re = ew.neg(cp.real(reduce_sum(ew.mul(cp.conj(v), u), (rows,))))
    im = ew.neg(ew.div(cp.imag(reduce_sum(ew.mul(mask, u), (rows,))),
                       cp.real(reduce_sum(ew.mul(mask, v), (rows,)))))
    return cp.complex_(re, im)


eig_p.def_rule("transpose", NOT_LINEAR)
eig_p.def_rule("batch", _batch_all(eig_p))


# ------------------------------------------------------------- decomp_memory

# A decomposition of complex matrices in compiled code, where complex values are pairs of
# parts (backend/cpu/codegen/complex_pairs.py): its complex operands and results are
# NumPy's memory of them (real arrays with a last axis of 2), which LAPACK's c and z
# routines read and write as they are.
decomp_memory_p = Primitive("decomp_memory", traits=frozenset({"costly"}))
DECOMPOSITIONS = {p.name: p for p in (cholesky_p, triangular_solve_p, lu_p, eigh_p, qr_p,
                                      svd_p, eig_p)}


def _complex_type(t: Type) -> Type:
    if t.dtype not in LAPACK_DTYPES[:2] or t.ndim < 1 or t.shape[-1] != 2:
        raise ValueError(f"decomp_memory: {t} is not complex numbers' memory")
    return Type(complex_dtype(t.dtype), t.shape[:-1])


def _memory_type(t: Type) -> Type:
    return Type(real_dtype(t.dtype), t.shape + (2,)) if t.dtype.kind == "c" else t


@decomp_memory_p.def_rule("shape")
def _decomp_memory_shape(*args: Type, decomp, complex_in, inner) -> list[Type]:
    types = [_complex_type(t) if c else t for t, c in zip(args, complex_in)]
    return [_memory_type(t) for t in DECOMPOSITIONS[decomp].rules["shape"](*types,
                                                                            **dict(inner))]


@decomp_memory_p.def_rule("impl")
def _decomp_memory_impl(*args, decomp, complex_in, inner):
    values = [np.ascontiguousarray(a).view(complex_dtype(a.dtype))[..., 0] if c else a
              for a, c in zip(args, complex_in)]
    outs = DECOMPOSITIONS[decomp].rules["impl"](*values, **dict(inner))
    return [o.view(real_dtype(o.dtype)).reshape(o.shape + (2,)) if o.dtype.kind == "c" else o
            for o in map(np.ascontiguousarray, outs)]


def decomp_memory(decomp: str, args: list, complex_in: tuple, params: dict) -> list:
    """`decomp` (a name of DECOMPOSITIONS) on `args`, those marked in `complex_in` being
    NumPy's memory of complex matrices; its complex results are memory too."""
    return bind(decomp_memory_p, *args, decomp=decomp, complex_in=tuple(complex_in),
                inner=tuple(sorted(params.items())))


decomp_memory_p.def_rule("batch", _batch_all(decomp_memory_p))
for _slot in ("jvp", "transpose"):
    decomp_memory_p.def_rule(_slot, Absent("exists only in compiled code's rewrite of complex "
                                           "values into parts, after every derivative is "
                                           "taken"))
