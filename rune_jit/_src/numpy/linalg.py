"""The implementation of rune_jit.numpy.linalg (its docstring is the public module's)."""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from ..ops import decomp as dc
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import reduce as red
from ..ops.shape import broadcast_in_dim
from ..trace import Tracer
from ._core import accept, as_value, dtype_weak, normalize_axis, shape_of, to_dtype
from .products import matmul, solve

__all__ = ["cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matrix_power",
           "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "svd", "LinAlgError"]

LinAlgError = np.linalg.LinAlgError
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


# ------------------------------------------------------------- operands

def _float(a: Any, where: str) -> Any:
    """a in the dtype numpy.linalg computes in: float32 and complex64 stay, other complex
    values are complex128 and the rest float64."""
    a = accept(a, where)
    dtype = dtype_weak(a)[0]
    if dtype == F16:
        raise TypeError(f"{where}: array type float16 is unsupported in linalg")
    if dtype.kind == "c":
        return to_dtype(as_value(a), C64 if dtype == C64 else C128)
    return to_dtype(as_value(a), F32 if dtype == F32 else F64)


def _stack(a: Any, where: str, square: bool = True) -> Any:
    a = _float(a, where)
    shape = shape_of(a)
    if len(shape) < 2:
        raise LinAlgError(f"{len(shape)}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if square and shape[-1] != shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return a


def _symmetric(a: Any, lower: bool) -> Any:
    """The symmetric (Hermitian) matrix of a's lower (upper) triangle: what LAPACK reads
    (of a complex diagonal, its real part)."""
    n = shape_of(a)[-1]
    if not dc.is_complex(a):
        mask = np.tri(n, dtype=bool) if lower else ~np.tri(n, k=-1, dtype=bool)
        return ew.select(dc._matrix_const(a, mask), a, _mT(a))
    mask = np.tri(n, k=-1, dtype=bool) if lower else ~np.tri(n, dtype=bool)
    other = ew.select(dc._matrix_const(a, np.eye(n, dtype=bool)), dc.real_part(a), dc.mH(a))
    return ew.select(dc._matrix_const(a, mask), a, other)


def _uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return UPLO == "L"


def _mT(x: Any) -> Any:
    return la.matrix_transpose(x)


def _mH(x: Any) -> Any:
    return dc.mH(x)


# ------------------------------------------------------------- factorizations

def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """The Cholesky factor L (lower, a = L L^H) of a Hermitian (symmetric) positive
    definite a, read from its lower triangle; with `upper`, U = L^H (a = U^H U), read
    from the upper one.
    A matrix that is not positive definite raises LinAlgError, compiled too.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])))
    [[2. 0.]
     [1. 2.]]
    """
    a = _stack(a, "rune_jit.numpy.linalg.cholesky")
    L = dc.cholesky(_symmetric(a, not upper))
    return _mH(L) if upper else L


def qr(a: Any, mode: str = "reduced") -> Any:
    """a = Q R, Q with orthonormal columns, R upper triangular; mode "reduced" (Q is
    [m, k], R [k, n], k = min(m, n)), "complete" (Q [m, m], R [m, n]) or "r" (R alone).
    Derivatives: for m >= n, mode "reduced" (or square).

    >>> import rune_jit.numpy as rnp
    >>> q, r = rnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> print(np.round(np.abs(r), 6))
    [[5.  2.2]
     [0.  0.4]]
    """
    where = "rune_jit.numpy.linalg.qr"
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"{where}: unrecognized mode {mode!r} (rune_jit has 'reduced', "
                         "'complete' and 'r')")
    a = _stack(a, where, square=False)
    q, r = dc.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (real, ascending) and eigenvectors (the columns) of a Hermitian
    (symmetric) a, read from its lower (UPLO="L") or upper triangle. The eigenvectors'
    derivative needs distinct eigenvalues (repeated ones give inf or NaN, as in JAX);
    complex eigenvectors' phases are LAPACK's, and not differentiated (as in JAX).

    >>> import rune_jit.numpy as rnp
    >>> w, v = rnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> print(w)
    [1. 3.]
    """
    a = _stack(a, "rune_jit.numpy.linalg.eigh")
    w, v = dc.eigh(_symmetric(a, _uplo(UPLO)), vectors=True)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    """The eigenvalues (real, ascending) of a Hermitian (symmetric) a, read from one
    triangle.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])))
    [1. 3.]
    """
    a = _stack(a, "rune_jit.numpy.linalg.eigvalsh")
    return dc.eigh(_symmetric(a, _uplo(UPLO)), vectors=False)[0]


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (the columns: unit norm, the largest component
    real, as LAPACK's geev) of a general square a. As JAX's (not NumPy's), the results
    are always complex (complex64 from float32 or complex64, else complex128): a traced
    program cannot know whether they will be real. Derivatives need distinct eigenvalues;
    those of the eigenvectors follow geev's normalization (JAX's rule, which JAX gives
    only with `enable_eigvec_derivs`).

    >>> import rune_jit.numpy as rnp
    >>> w, v = rnp.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]]))
    >>> print(np.round(w, 6))
    [0.+1.j 0.-1.j]
    """
    a = _stack(a, "rune_jit.numpy.linalg.eig")
    return EigResult(*dc.eig(a, vectors=True))


def eigvals(a: Any) -> Any:
    """The eigenvalues of a general square a, always complex (as `eig`'s).

    >>> import rune_jit.numpy as rnp
    >>> print(np.round(rnp.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]])), 6))
    [2.+0.j 3.+0.j]
    """
    a = _stack(a, "rune_jit.numpy.linalg.eigvals")
    return dc.eig(a, vectors=False)[0]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """a = U diag(S) Vh with S descending; `full_matrices` as NumPy's (the default: U
    [m, m], Vh [n, n]), else U [m, k], Vh [k, n]. `hermitian` is accepted and the
    general algorithm used. Derivatives of U and Vh: full_matrices=False (or square),
    distinct nonzero singular values.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False))
    [4. 3.]
    """
    del hermitian
    a = _stack(a, "rune_jit.numpy.linalg.svd", square=False)
    if not compute_uv:
        return dc.svd(a, full_matrices=False, compute_uv=False)[0]
    u, s, vt = dc.svd(a, full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vt)


# ------------------------------------------------------------- determinants, inverses

def _lu_parts(a: Any):
    lu, pivots, _ = dc.lu(a)
    n = shape_of(a)[-1]
    i64 = np.dtype(np.int64)
    swaps = red.reduce_sum(ew.convert(ew.ne(pivots, _ramp(pivots, n)), i64),
                           (len(shape_of(pivots)) - 1,))
    two = np.asarray(2, i64)
    parity = ew.sub(np.asarray(1, i64), ew.mul(two, ew.remainder(swaps, two)))  # (-1)^swaps
    return dc.diagonal(lu), ew.convert(parity, _dtype_of(a))


def _dtype_of(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x).dtype


def _ramp(like: Any, n: int) -> Any:
    shape = shape_of(like)
    return broadcast_in_dim(np.arange(n, dtype=np.int64), shape, (len(shape) - 1,))


def slogdet(a: Any) -> SlogdetResult:
    """(sign, log |det a|) of each matrix, from its LU factorization; a singular matrix
    gives (0, -inf).

    >>> import rune_jit.numpy as rnp
    >>> sign, logdet = rnp.linalg.slogdet(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> print(sign, round(float(logdet), 6))
    -1.0 1.791759
    """
    a = _stack(a, "rune_jit.numpy.linalg.slogdet")
    diag, parity = _lu_parts(a)
    last = (len(shape_of(diag)) - 1,)
    sign = ew.mul(parity, red.reduce_prod(ew.sign(diag), last))
    return SlogdetResult(sign, red.reduce_sum(ew.log(ew.abs(diag)), last))


def det(a: Any) -> Any:
    """The determinant of each matrix, from its LU factorization.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])).round(6))
    -2.0
    """
    a = _stack(a, "rune_jit.numpy.linalg.det")
    diag, parity = _lu_parts(a)
    return ew.mul(parity, red.reduce_prod(diag, (len(shape_of(diag)) - 1,)))


def inv(a: Any) -> Any:
    """The inverse of each matrix; a singular one raises LinAlgError, compiled too.
    Complex matrices are inverted by `solve`'s complex form.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])))
    [[0.5  0.  ]
     [0.   0.25]]
    """
    where = "rune_jit.numpy.linalg.inv"
    if dtype_weak(accept(a, where))[0].kind == "c":  # solve's complex form
        shape = shape_of(a)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")
        return solve(a, dc.eye_like(as_value(a)))
    a = _stack(a, where)
    return la.solve(a, dc.eye_like(a))


def matrix_power(a: Any, n: int) -> Any:
    """a @ a @ ... (n times) by repeated squaring, for an integer n known when tracing;
    n = 0 gives the identity, n < 0 the power of the inverse. Integer matrices stay
    integers (for n >= 0), as in NumPy.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.matrix_power(np.array([[1, 1], [1, 0]]), 10))
    [[89 55]
     [55 34]]
    """
    where = "rune_jit.numpy.linalg.matrix_power"
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{where}: exponent must be an integer") from None
    a = as_value(accept(a, where))
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        return broadcast_in_dim(np.eye(shape[-1], dtype=_dtype_of(a)), shape,
                                (len(shape) - 2, len(shape) - 1))
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = matmul(square, square)


# ------------------------------------------------------------- from the SVD

def _eps(x: Any) -> float:
    return float(np.finfo(_dtype_of(x)).eps)


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The number of singular values above tol (default: the largest times max(m, n)
    times eps, or times rtol), for each matrix.

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    del hermitian
    where = "rune_jit.numpy.linalg.matrix_rank"
    a = _float(A, where)
    shape = shape_of(a)
    if len(shape) < 2:
        return ew.convert(red.reduce_max(ew.ne(a, np.asarray(0, _dtype_of(a))),
                                         tuple(range(len(shape)))), np.dtype(np.int64))
    s = dc.svd(a, full_matrices=False, compute_uv=False)[0]
    dtype = _dtype_of(s)
    last = (len(shape_of(s)) - 1,)
    if tol is None:
        scale = (max(shape[-2:]) * _eps(s) if rtol is None
                 else _float(rtol, where))
        tol = ew.mul(_bcast_last(scale, s, dtype),
                     red.reduce_max(s, last) if shape[-1] and shape[-2] else np.asarray(0, dtype))
    else:
        tol = _bcast_last(_float(tol, where), s, dtype)
    big = ew.gt(s, _expand_last(tol, s))
    return red.reduce_sum(ew.convert(big, np.dtype(np.int64)), last)


def _bcast_last(v: Any, s: Any, dtype: np.dtype) -> Any:
    """A scalar or a [...] value, in s's dtype, broadcast over s's batch shape."""
    v = to_dtype(as_value(v), dtype) if not isinstance(v, float) else np.asarray(v, dtype)
    batch = shape_of(s)[:-1]
    vs = shape_of(v)
    return broadcast_in_dim(v, batch, tuple(range(len(batch) - len(vs), len(batch))))


def _expand_last(v: Any, like: Any) -> Any:
    """v [...] as v[..., None] broadcast to like's shape."""
    shape = shape_of(like)
    return broadcast_in_dim(v, shape, tuple(range(len(shape) - 1)))


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = np._NoValue
         ) -> Any:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD: singular values
    at most rcond times the largest count as zero (rcond 1e-15 unless given, or
    rtol; rtol=None: max(m, n) eps).

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.pinv(np.array([[1.0, 0.0], [0.0, 0.0]])))
    [[1. 0.]
     [0. 0.]]
    """
    del hermitian
    where = "rune_jit.numpy.linalg.pinv"
    a = _stack(a, where, square=False)
    m, n = shape_of(a)[-2:]
    if rcond is None:
        rcond = (1e-15 if rtol is np._NoValue else
                 max(m, n) * _eps(a) if rtol is None else rtol)
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    u, s, vt = dc.svd(a, full_matrices=False, compute_uv=True)
    dtype = _dtype_of(s)
    if min(m, n) == 0:
        return ew.mul(_mT(a), np.asarray(0, _dtype_of(a)))
    last = (len(shape_of(s)) - 1,)
    cutoff = ew.mul(_bcast_last(rcond if isinstance(rcond, float) else _float(rcond, where),
                                s, dtype), red.reduce_max(s, last))
    inv_s = dc.like(_safe_reciprocal(s, _expand_last(cutoff, s)), u)
    return la.batched_matmul(_mH(vt), ew.mul(dc.col_vector(inv_s, _mH(u)), _mH(u)))


def _safe_reciprocal(s: Any, cutoff: Any) -> Any:
    """1 / s where s > cutoff, else 0 (with no division by those)."""
    big = ew.gt(s, cutoff)
    one = np.asarray(1, _dtype_of(s))
    return ew.select(big, ew.div(one, ew.select(big, s, one)), np.asarray(0, _dtype_of(s)))


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """(x, residuals, rank, s): the least-squares solution of a @ x = b (the one of least
    norm), from the SVD of a [m, n] (real or complex); b is [m] or [m, k]. Singular values at most rcond
    times the largest (default: eps max(m, n)) count as zero.

    As NumPy's, residuals are the squared norms of b - a @ x per column when a has full
    column rank and m > n, else empty. Under a trace the rank is not known: residuals
    are then computed whenever m > n.

    >>> import rune_jit.numpy as rnp
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> x, res, rank, s = rnp.linalg.lstsq(a, np.array([1.0, 1.0, 0.0]))
    >>> print(x.round(6), res.round(6), rank)
    [0.333333 0.333333] [1.333333] 2
    """
    where = "rune_jit.numpy.linalg.lstsq"
    a, b = accept(a, where), accept(b, where)
    dtypes = [dtype_weak(x)[0] for x in (a, b)]
    if F16 in dtypes:
        raise TypeError(f"{where}: array type float16 is unsupported in linalg")
    single = all(d in (F32, C64) for d in dtypes)
    if any(d.kind == "c" for d in dtypes):
        dtype = C64 if single else C128
    else:
        dtype = F32 if single else F64
    a, b = (to_dtype(as_value(x), dtype) for x in (a, b))
    real = np.dtype(F32 if single else F64)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != 2:
        raise LinAlgError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    vector = len(sb) == 1
    if len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise LinAlgError("Incompatible dimensions")
    b2 = broadcast_in_dim(b, (sb[0], 1), (0,)) if vector else b
    m, n = sa
    k = min(m, n)
    if rcond is None:
        rcond = float(np.finfo(dtype).eps) * max(m, n)
    u, s, vt = dc.svd(a, full_matrices=False, compute_uv=True)
    if k == 0:
        x = broadcast_in_dim(np.zeros((), dtype), (n, shape_of(b2)[1]), ())
        rank = np.asarray(0, np.int32)
    else:
        cutoff = ew.mul(np.asarray(rcond, real), red.reduce_max(s, (0,)))
        inv_s = dc.like(_safe_reciprocal(s, cutoff), u)
        utb = la.batched_matmul(_mH(u), b2)
        x = la.batched_matmul(_mH(vt), ew.mul(dc.col_vector(inv_s, utb), utb))
        rank = ew.convert(red.reduce_sum(ew.convert(ew.gt(s, cutoff), np.dtype(np.int32)),
                                         (0,)), np.dtype(np.int32))
    concrete = not isinstance(rank, Tracer)
    if m > n and (not concrete or int(rank) == n):
        r = ew.sub(b2, la.batched_matmul(a, x)) if k else b2
        r = ew.abs(r) if dtype.kind == "c" else r
        resid = red.reduce_sum(ew.mul(r, r), (0,))
    else:
        resid = np.zeros((0,), real)
    if vector:
        x = _drop_last(x)
    return x, resid, rank, s


def _drop_last(x: Any) -> Any:
    from ..ops.shape import reshape

    return reshape(x, shape_of(x)[:-1])


# ------------------------------------------------------------- norms

def _complex_norm_input(x: Any, ord: Any, axis: Any, nd: int) -> Any:
    """|x|, whose norm is x's for every norm but those of singular values (x, whose SVD
    gives them)."""
    matrix = (nd == 2 if axis is None else not isinstance(axis, int) and len(axis) == 2)
    return _float(x, "") if matrix and ord in ("nuc", 2, -2) else ew.abs(x)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's vector and matrix norms. One axis (or a vector): ord None or 2 (the
    2-norm), inf, -inf, 0 (the count of nonzeros), 1, or any other p; two axes (or a
    matrix): None or "fro", "nuc" (the sum of singular values), inf, -inf, 1, -1, 2
    (the largest singular value), -2 (the smallest).

    >>> import rune_jit.numpy as rnp
    >>> print(rnp.linalg.norm(np.array([3.0, 4.0])), rnp.linalg.norm(np.eye(2), "nuc"))
    5.0 2.0
    """
    where = "rune_jit.numpy.linalg.norm"
    x = as_value(accept(x, where))
    shape = shape_of(x)
    nd = len(shape)
    if _dtype_of(x).kind == "c":
        x = _complex_norm_input(x, ord, axis, nd)
    if _dtype_of(x).kind not in "fc":
        x = to_dtype(x, F64)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            axes = tuple(range(nd))
            ret = ew.sqrt(red.reduce_sum(ew.mul(x, x), axes))
            return _keepdims(ret, shape, axes, keepdims)
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    axes = tuple(normalize_axis(int(a), nd, where) for a in axis)
    if len(axes) == 1:
        return _keepdims(_vector_norm(x, ord, axes), shape, axes, keepdims)
    if len(axes) == 2:
        row, col = axes
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _keepdims(_matrix_norm(x, ord, row, col), shape, axes, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def _keepdims(y: Any, shape: tuple, axes: tuple, keepdims: bool) -> Any:
    if not keepdims:
        return y
    from ..ops.shape import reshape

    return reshape(y, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _vector_norm(x: Any, ord: Any, axes: tuple) -> Any:
    dtype = _dtype_of(x)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord is None or ord == 2:
        return ew.sqrt(red.reduce_sum(ew.mul(x, x), axes))
    absx = ew.abs(x)
    if ord == np.inf:
        return red.reduce_max(absx, axes)
    if ord == -np.inf:
        return red.reduce_min(absx, axes)
    if ord == 0:
        return red.reduce_sum(ew.convert(ew.ne(x, np.asarray(0, dtype)), dtype), axes)
    if ord == 1:
        return red.reduce_sum(absx, axes)
    p = np.asarray(ord, dtype)
    return ew.pow(red.reduce_sum(ew.pow(absx, p), axes), np.asarray(1, dtype) / p)


def _matrix_norm(x: Any, ord: Any, row: int, col: int) -> Any:
    if ord in (2, -2, "nuc"):
        from ..ops.shape import transpose

        nd = len(shape_of(x))
        rest = [i for i in range(nd) if i not in (row, col)]
        s = dc.svd(transpose(x, tuple(rest) + (row, col)), full_matrices=False,
                   compute_uv=False)[0]
        last = (len(shape_of(s)) - 1,)
        op = {2: red.reduce_max, -2: red.reduce_min, "nuc": red.reduce_sum}[ord]
        return op(s, last)
    absx = ew.abs(x)
    if ord in (1, -1):
        ext = red.reduce_max if ord == 1 else red.reduce_min
        return ext(red.reduce_sum(absx, (row,)), (col - (col > row),))
    if ord in (np.inf, -np.inf):
        ext = red.reduce_max if ord == np.inf else red.reduce_min
        return ext(red.reduce_sum(absx, (col,)), (row - (row > col),))
    if ord in (None, "fro", "f"):
        return ew.sqrt(red.reduce_sum(ew.mul(x, x), (row, col)))
    raise ValueError("Invalid norm order for matrices.")


# the array API's names (rune_jit/_src/linalg_array_api.py)
from ..linalg_array_api import matrix_norm, matrix_transpose, vector_norm  # noqa: E402

__all__ += ["matrix_norm", "matrix_transpose", "vector_norm"]
