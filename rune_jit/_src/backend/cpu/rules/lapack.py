"""Decompositions in compiled code: LAPACK calls, one per matrix of a batch.

LAPACK comes from scipy-openblas64, the OpenBLAS build NumPy and SciPy ship: ILP64
(64-bit integers: no 2^31 limits), its symbols prefixed `scipy_` and suffixed `64_`
(`scipy_dpotrf_64_`), loaded once per process by `openblas.py`, so that compiled code
resolves its symbols as it does libm's: through the process's global scope.

LAPACK is column-major, our buffers row-major: a row-major matrix is its transpose in
column-major. Symmetric problems (potrf, syevd) read the transpose as the matrix with
the other triangle; a triangular solve of A X = B is solved as X^T A^T = B^T, a
right-side trsm on the same memory; svd(A^T) = V S U^T, so gesdd on the transpose
writes V^T where it writes U, and U where it writes V^T. getrf and geqrf work on a
transposed copy. Workspace sizes are queried once, at lowering (shapes are static), and
the workspace is a buffer of the call's arena.

A failure LAPACK reports (not positive definite, no convergence) fails the program
with NumPy's LinAlgError; a singular triangular matrix too, as scipy does. A singular
matrix in lu is not a failure (det and slogdet read it).

Complex matrices (decomp_memory: NumPy's memory of them, interleaved parts) go to the c
and z routines through the same rules, each element moved as a vector of its two parts.
The transposed memory of a Hermitian matrix is its conjugate: heevd's eigenvectors of it
are the conjugates of ours, and potrf's factor of it is ours read row-major as it is.
"""

from __future__ import annotations

import ctypes
import math

import llvmlite.ir as ir
import numpy as np

from ....dtypes import real_dtype
from ....ir import Type
from ....ops.decomp import (DECOMPOSITIONS, cholesky_p, decomp_memory_p, eigh_p, lu_p, qr_p,
                            svd_p, triangular_solve_p)
from ..codegen import arith as A
from ..runtime import openblas
from . import small_lu
from ..codegen.emit import F32, F64, I8, I64, PTR, declare
from ..codegen.lower import lowering
from ..codegen.values import Array

PREFIX = openblas.PREFIX
library = openblas.library


LETTERS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}


def symbol(routine: str, dtype: np.dtype) -> str:
    return f"{PREFIX}{LETTERS[dtype]}{routine}_64_"


def _ctype(dtype: np.dtype):
    return ctypes.c_float if real_dtype(dtype) == np.float32 else ctypes.c_double


# ------------------------------------------------------------- workspace queries

def _query(routine: str, dtype: np.dtype, args: list, work_at: int, iwork_at: int | None = None,
           rwork_at: int | None = None) -> tuple[int, int, int]:
    """(lwork, liwork, lrwork) as LAPACK asks, calling it with lwork = -1 (liwork = -1,
    lrwork = -1). A complex routine's work is complex: its size is the real part."""
    fn = getattr(library(), symbol(routine, dtype))
    ct = _ctype(dtype)
    work, rwork = (ct * 2)(), (ct * 2)()
    iwork = (ctypes.c_int64 * 1)()
    info = ctypes.c_int64(0)
    out = []
    for i, a in enumerate(args):
        if i == work_at:
            out += [work, ctypes.byref(ctypes.c_int64(-1))]
        elif iwork_at is not None and i == iwork_at:
            out += [iwork, ctypes.byref(ctypes.c_int64(-1))]
        elif rwork_at is not None and i == rwork_at:
            out += [rwork, ctypes.byref(ctypes.c_int64(-1))]
        elif isinstance(a, bytes):
            out.append(ctypes.c_char_p(a))
        elif isinstance(a, int):
            out.append(ctypes.byref(ctypes.c_int64(a)))
        else:  # an array argument: a small dummy
            out.append((ct * 16)())
    out.append(ctypes.byref(info))
    fn(*out)
    return max(1, int(work[0])), max(1, int(iwork[0])), max(1, int(rwork[0]))


# ------------------------------------------------------------- calling LAPACK

class Call:
    """Arguments of LAPACK calls in one lowering: integers, characters and scalars by
    reference (stack slots), info read back after each call."""

    def __init__(self, lw, dtype: np.dtype):
        self.lw, self.dtype = lw, dtype
        self.info = lw.fn.buffer(8)

    def int(self, v) -> ir.Value:
        slot = self.lw.fn.buffer(8)
        self.lw.b.store(v if isinstance(v, ir.Value) else ir.Constant(I64, int(v)), slot)
        return slot

    def char(self, c: str) -> ir.Value:
        slot = self.lw.fn.buffer(1)
        self.lw.b.store(ir.Constant(I8, ord(c)), slot)
        return slot

    def scalar(self, value: float) -> ir.Value:
        slot = self.lw.fn.buffer(16)
        self.lw.b.store(_const(self.lw, self.dtype, value), slot)
        return slot

    def __call__(self, routine: str, *args: ir.Value, chars: int = 0) -> ir.Value:
        """Call `routine` (args, then info, then the hidden lengths of its `chars`
        character arguments); -> info."""
        b = self.lw.b
        full = list(args) + [self.info] + [ir.Constant(I64, 1)] * chars
        fn = declare(self.lw.fn.module, symbol(routine, self.dtype), ir.VoidType(),
                     [a.type for a in full])
        b.call(fn, full)
        return b.load(self.info, typ=I64)


# ------------------------------------------------------------- elements, real or complex

def _parts(dtype: np.dtype) -> tuple[np.dtype, int | None]:
    """The dtype elements are moved in, and how many make one (a complex one: 2, as one
    vector; a real one: None, a scalar)."""
    return (real_dtype(dtype), 2) if dtype.kind == "c" else (dtype, None)


def _index(lw, dtype: np.dtype, i: ir.Value) -> ir.Value:
    return lw.b.mul(i, lw.i64(2)) if dtype.kind == "c" else i


def _at(lw, ptr, dtype, offset) -> ir.Value:
    offset = offset if isinstance(offset, ir.Value) else lw.i64(offset)
    return lw.address(ptr, _parts(dtype)[0], _index(lw, dtype, offset))


def _load(lw, ptr, dtype: np.dtype, i: ir.Value) -> ir.Value:
    part, width = _parts(dtype)
    return lw.load_at(ptr, part, _index(lw, dtype, i), width=width)


def _store(lw, ptr, dtype: np.dtype, i: ir.Value, v: ir.Value) -> None:
    lw.store_at(ptr, _parts(dtype)[0], _index(lw, dtype, i), v)


def _const(lw, dtype: np.dtype, value: float) -> ir.Constant:
    part, width = _parts(dtype)
    t = F32 if part == np.float32 else F64
    return ir.Constant(t, value) if width is None else ir.Constant(ir.VectorType(t, 2),
                                                                    [value, 0.0])


def _conj(lw, v: ir.Value) -> ir.Value:
    return lw.b.insert_element(v, lw.b.fneg(lw.b.extract_element(v, lw.i64(1))), lw.i64(1))


def _into(lw, v, dest: ir.Value) -> ir.Value:
    """v's elements in `dest`: a complex operand (memory already) is copied whole."""
    if v.type.dtype.kind == "c":
        lw.fn.memcpy(dest, v.ptr, v.type.nbytes)
        return dest
    return lw.materialize(v, dest).ptr


def _per_matrix(lw, nb: int, body) -> None:
    lw.fn.loop(lw.i64(0), lw.i64(nb), 1, [], lambda bi, _: body(bi) or [])


def _fail_unless_zero(lw, info: ir.Value, site: int) -> None:
    lw.fail_if_any(lw.b.icmp_signed("!=", info, lw.i64(0)), "singular", site)


def _site(lw, message: str) -> int:
    return lw.errors.add("singular", message=message)


def _transpose_copy(lw, src, dst, dtype, rows: int, cols: int, dst_ld: int | None = None):
    """dst (column-major, leading dimension dst_ld) = src (row-major rows x cols)."""
    ld = rows if dst_ld is None else dst_ld

    def one(idx):
        i, j = idx
        v = _load(lw, src, dtype, lw.b.add(lw.b.mul(i, lw.i64(cols)), j))
        _store(lw, dst, dtype, lw.b.add(lw.b.mul(j, lw.i64(ld)), i), v)

    lw.loop_nest((rows, cols), one)


def _transpose_in_place(lw, ptr, dtype, n: int, conjugate: bool = False) -> None:
    """The row-major n x n matrix at ptr transposed (conjugate-transposed)."""
    def fix(v):
        return _conj(lw, v) if conjugate else v

    def row(r, _):
        def col(c, _):
            p = lw.b.add(lw.b.mul(r, lw.i64(n)), c)
            q = lw.b.add(lw.b.mul(c, lw.i64(n)), r)
            u, v = _load(lw, ptr, dtype, p), _load(lw, ptr, dtype, q)
            _store(lw, ptr, dtype, p, fix(v))
            _store(lw, ptr, dtype, q, fix(u))
            return []
        lw.fn.loop(lw.b.add(r, lw.i64(1)), lw.i64(n), 1, [], col)
        if conjugate:
            d = lw.b.mul(r, lw.i64(n + 1))
            _store(lw, ptr, dtype, d, fix(_load(lw, ptr, dtype, d)))
        return []
    lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], row)


def _zero_triangle(lw, ptr, dtype, n: int, upper: bool) -> None:
    """Zero the strict upper (lower) triangle of a row-major n x n matrix."""
    zero = _const(lw, dtype, 0.0)

    def row(r, _):
        lo, hi = (lw.b.add(r, lw.i64(1)), lw.i64(n)) if upper else (lw.i64(0), r)
        lw.fn.loop(lo, hi, 1, [], lambda c, _: _store(
            lw, ptr, dtype, lw.b.add(lw.b.mul(r, lw.i64(n)), c), zero) or [])
        return []
    lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], row)


def _is_zero(lw, v: ir.Value) -> ir.Value:
    """Whether an element (a complex one: both its parts) is zero or NaN."""
    zero = v.type(None) if isinstance(v.type, ir.VectorType) else ir.Constant(v.type, 0.0)
    test = lw.b.fcmp_unordered("==", v, zero)
    if isinstance(v.type, ir.VectorType):
        test = lw.b.and_(lw.b.extract_element(test, lw.i64(0)),
                         lw.b.extract_element(test, lw.i64(1)))
    return test


def _zero_diagonal_test(lw, ptr, dtype, n: int) -> ir.Value:
    """Whether a row-major n x n matrix has a zero on its diagonal."""
    def step(i, acc):
        d = _load(lw, ptr, dtype, lw.b.mul(i, lw.i64(n + 1)))
        return [lw.b.or_(acc[0], _is_zero(lw, d))]

    return lw.fn.loop(lw.i64(0), lw.i64(n), 1, [ir.Constant(ir.IntType(1), 0)], step)[0]


# ------------------------------------------------------------- cholesky: potrf

@lowering(cholesky_p)
def _cholesky_lower(lw, args, out_types):
    out = out_types[0]
    dt, n = out.dtype, out.shape[-1]
    nb = math.prod(out.shape[:-2])
    lptr = _into(lw, args[0], lw.out_buffer(0, out))
    if n == 0 or nb == 0:
        return [Array(out, lptr)]
    site = _site(lw, "Matrix is not positive definite")
    if n <= SMALL_CHOLESKY and dt.kind == "f":
        _per_matrix(lw, nb, lambda bi: _small_cholesky(
            lw, _at(lw, lptr, dt, lw.b.mul(bi, lw.i64(n * n))), dt, n, site))
        return [Array(out, lptr)]
    library()
    call = Call(lw, dt)
    uplo, nn = call.char("U"), call.int(n)  # row-major lower = column-major upper

    def one(bi):
        m = _at(lw, lptr, dt, lw.b.mul(bi, lw.i64(n * n)))
        _fail_unless_zero(lw, call("potrf", uplo, nn, m, nn, chars=1), site)
        _zero_triangle(lw, m, dt, n, upper=True)

    _per_matrix(lw, nb, one)
    return [Array(out, lptr)]


# A call of potrf costs about a microsecond whatever the size (10^4 8 x 8: 12 ms, NumPy
# 10.7); below this size the factorization is inlined instead (1.9 ms).
SMALL_CHOLESKY = 16


def _small_cholesky(lw, ptr, dt, n: int, site: int) -> None:
    """Cholesky-Crout in place on a row-major n x n matrix (its lower triangle), failing
    unless each pivot is positive, as potrf; then the strict upper triangle zeroed."""
    b = lw.b
    zero = lw.const(dt, 0)

    def at(r, c):
        return b.add(b.mul(r, lw.i64(n)), c)

    def dot(r1, r2, stop, start_val):
        def step(k, acc):
            return [b.fsub(acc[0], b.fmul(lw.load_at(ptr, dt, at(r1, k)),
                                          lw.load_at(ptr, dt, at(r2, k))))]
        return lw.fn.loop(lw.i64(0), stop, 1, [start_val], step)[0]

    def column(j, _):
        s = dot(j, j, j, lw.load_at(ptr, dt, at(j, j)))
        lw.fail_if_any(b.not_(b.fcmp_ordered(">", s, zero)), "singular", site)
        d = A.intrinsic(b, "sqrt", s)
        lw.store_at(ptr, dt, at(j, j), d)
        inv = b.fdiv(lw.const(dt, 1.0), d)

        def row(i, _):
            v = dot(i, j, j, lw.load_at(ptr, dt, at(i, j)))
            lw.store_at(ptr, dt, at(i, j), b.fmul(v, inv))
            return []
        lw.fn.loop(b.add(j, lw.i64(1)), lw.i64(n), 1, [], row)
        return []

    lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], column)
    _zero_triangle(lw, ptr, dt, n, upper=True)


# ------------------------------------------------------------- triangular solve: trsm

@lowering(triangular_solve_p)
def _trisolve_lower(lw, args, out_types, *, lower, transpose_a, unit_diagonal):
    out = out_types[0]
    dt = out.dtype
    n, k = out.shape[-2:]
    nb = math.prod(out.shape[:-2])
    a = lw.materialize(args[0])
    x = _into(lw, args[1], lw.out_buffer(0, out))
    if n == 0 or k == 0 or nb == 0:
        return [Array(out, x)]
    library()
    call = Call(lw, dt)
    # X = op(A)^-1 B as X^T op(A)^T = B^T: a right-side solve with A's memory (A^T)
    side, uplo = call.char("R"), call.char("U" if lower else "L")
    trans, diag = call.char("T" if transpose_a else "N"), call.char("U" if unit_diagonal else "N")
    mm, nn, one_ = call.int(k), call.int(n), call.scalar(1.0)
    site = _site(lw, "singular matrix")
    fn = declare(lw.fn.module, symbol("trsm", dt), ir.VoidType(), [PTR] * 11 + [I64] * 4)

    def solve(bi):
        am = _at(lw, a.ptr, dt, lw.b.mul(bi, lw.i64(n * n)))
        if not unit_diagonal:
            lw.fail_if_any(_zero_diagonal_test(lw, am, dt, n), "singular", site)
        bm = _at(lw, x, dt, lw.b.mul(bi, lw.i64(n * k)))
        lw.b.call(fn, [side, uplo, trans, diag, mm, nn, one_, am, nn, bm, mm]
                  + [ir.Constant(I64, 1)] * 4)

    _per_matrix(lw, nb, solve)
    return [Array(out, x)]


# ------------------------------------------------------------- lu: getrf

@lowering(lu_p)
def _lu_lower(lw, args, out_types):
    out, piv_t, perm_t = out_types
    dt, n = out.dtype, out.shape[-1]
    if 0 < n <= small_lu.SMALL and dt.kind == "f":
        return small_lu.lu(lw, args[0], out_types)
    nb = math.prod(out.shape[:-2])
    src = lw.materialize(args[0])
    lu = lw.out_buffer(0, out)
    piv = lw.out_buffer(1, piv_t)
    perm = lw.out_buffer(2, perm_t)
    if n == 0 or nb == 0:
        return [Array(out, lu), Array(piv_t, piv), Array(perm_t, perm)]
    library()
    call = Call(lw, dt)
    nn = call.int(n)
    i64 = np.dtype(np.int64)

    def one(bi):
        m = _at(lw, lu, dt, lw.b.mul(bi, lw.i64(n * n)))
        _transpose_copy(lw, _at(lw, src.ptr, dt, lw.b.mul(bi, lw.i64(n * n))), m, dt, n, n)
        p = _at(lw, piv, i64, lw.b.mul(bi, lw.i64(n)))
        call("getrf", nn, nn, m, nn, p)  # info > 0: singular, which det reads as 0
        _transpose_in_place(lw, m, dt, n)
        q = _at(lw, perm, i64, lw.b.mul(bi, lw.i64(n)))
        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], lambda i, _: lw.store_at(q, i64, i, i) or [])

        def swap(i, _):  # 1-based LAPACK pivots to 0-based; apply them to perm
            j = lw.b.sub(lw.load_at(p, i64, i), lw.i64(1))
            lw.store_at(p, i64, i, j)
            u, v = lw.load_at(q, i64, i), lw.load_at(q, i64, j)
            lw.store_at(q, i64, i, v)
            lw.store_at(q, i64, j, u)
            return []
        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], swap)

    _per_matrix(lw, nb, one)
    return [Array(out, lu), Array(piv_t, piv), Array(perm_t, perm)]


# ------------------------------------------------------------- eigh: syevd

@lowering(eigh_p)
def _eigh_lower(lw, args, out_types, *, vectors):
    w_t = out_types[0]
    a_t = args[0].type
    dt, n = a_t.dtype, a_t.shape[-1]
    nb = math.prod(a_t.shape[:-2])
    w = lw.out_buffer(0, w_t)
    v = lw.out_buffer(1, out_types[1]) if vectors else lw.buffer(a_t)
    v = _into(lw, args[0], v)
    outs = [Array(w_t, w)] + ([Array(out_types[1], v)] if vectors else [])
    if n == 0 or nb == 0:
        return outs
    library()
    jobz = "V" if vectors else "N"
    hermitian = dt.kind == "c"
    routine = "heevd" if hermitian else "syevd"
    head = [jobz.encode(), b"U", n, None, n, None]
    lwork, liwork, lrwork = (_query(routine, dt, head + [None, None, None], 6, 8, 7)
                             if hermitian else _query(routine, dt, head + [None, None], 6, 7))
    call = Call(lw, dt)
    work = lw.fn.buffer(lwork * dt.itemsize)
    iwork = lw.fn.buffer(liwork * 8)
    rwork = [lw.fn.buffer(lrwork * w_t.dtype.itemsize), call.int(lrwork)] if hermitian else []
    args_ = [call.char(jobz), call.char("U"), call.int(n)]
    lw_, liw, nn = call.int(lwork), call.int(liwork), call.int(n)
    site = _site(lw, "Eigenvalues did not converge")

    def one(bi):
        m = _at(lw, v, dt, lw.b.mul(bi, lw.i64(n * n)))
        wm = _at(lw, w, w_t.dtype, lw.b.mul(bi, lw.i64(n)))
        info = call(routine, *args_, m, nn, wm, work, lw_, *rwork, iwork, liw, chars=2)
        _fail_unless_zero(lw, info, site)
        if vectors:  # column j of LAPACK's result is eigenvector j (conjugated): row j of ours
            _transpose_in_place(lw, m, dt, n, conjugate=hermitian)

    _per_matrix(lw, nb, one)
    return outs


# ------------------------------------------------------------- qr: geqrf, orgqr

@lowering(qr_p)
def _qr_lower(lw, args, out_types, *, full_matrices):
    q_t, r_t = out_types
    a_t = args[0].type
    dt = a_t.dtype
    m, n = a_t.shape[-2:]
    kq, k = q_t.shape[-1], min(m, n)
    nb = math.prod(a_t.shape[:-2])
    src = lw.materialize(args[0])
    q, r = lw.out_buffer(0, q_t), lw.out_buffer(1, r_t)
    outs = [Array(q_t, q), Array(r_t, r)]
    if nb == 0 or m == 0:
        return outs
    cols = max(n, kq)
    buf = lw.fn.buffer(m * cols * dt.itemsize)  # column-major, leading dimension m
    lw.fn.memset0(q, q_t.nbytes)
    lw.fn.memset0(r, r_t.nbytes)
    if k == 0:  # no reflectors: q is the identity's first kq columns
        lw.loop_nest((nb, kq), lambda i: _store(lw, q, dt, lw.offset(
            (nb, m, kq), [i[0], i[1], i[1]]), _const(lw, dt, 1.0)))
        return outs
    library()
    orgqr = "ungqr" if dt.kind == "c" else "orgqr"
    lq1 = _query("geqrf", dt, [m, n, None, m, None, None], 5)[0]
    lq2 = _query(orgqr, dt, [m, kq, k, None, m, None, None], 6)[0]
    lwork = max(lq1, lq2)
    call = Call(lw, dt)
    work = lw.fn.buffer(lwork * dt.itemsize)
    tau = lw.fn.buffer(k * dt.itemsize)
    mm_, nn, kk, kqq, lwk = (call.int(v) for v in (m, n, k, kq, lwork))

    def one(bi):
        _transpose_copy(lw, _at(lw, src.ptr, dt, lw.b.mul(bi, lw.i64(m * n))), buf, dt, m, n)
        call("geqrf", mm_, nn, buf, mm_, tau, work, lwk)
        rb = _at(lw, r, dt, lw.b.mul(bi, lw.i64(r_t.shape[-2] * n)))

        def upper(idx):
            i, j = idx
            keep = lw.b.icmp_signed("<=", i, j)
            v = _load(lw, buf, dt, lw.b.add(lw.b.mul(j, lw.i64(m)), i))
            _store(lw, rb, dt, lw.b.add(lw.b.mul(i, lw.i64(n)), j),
                   lw.b.select(keep, v, _const(lw, dt, 0.0)))
        lw.loop_nest((k, n), upper)
        call(orgqr, mm_, kqq, kk, buf, mm_, tau, work, lwk)
        qb = _at(lw, q, dt, lw.b.mul(bi, lw.i64(m * kq)))

        def back(idx):
            i, j = idx
            v = _load(lw, buf, dt, lw.b.add(lw.b.mul(j, lw.i64(m)), i))
            _store(lw, qb, dt, lw.b.add(lw.b.mul(i, lw.i64(kq)), j), v)
        lw.loop_nest((m, kq), back)

    _per_matrix(lw, nb, one)
    return outs


# ------------------------------------------------------------- svd: gesdd

@lowering(svd_p)
def _svd_lower(lw, args, out_types, *, full_matrices, compute_uv):
    a_t = args[0].type
    dt = a_t.dtype
    m, n = a_t.shape[-2:]
    k = min(m, n)
    nb = math.prod(a_t.shape[:-2])
    if compute_uv:
        u_t, s_t, vt_t = out_types
    else:
        (s_t,), u_t, vt_t = out_types, None, None
    s = lw.out_buffer(1 if compute_uv else 0, s_t)
    u = lw.out_buffer(0, u_t) if compute_uv else None
    vt = lw.out_buffer(2, vt_t) if compute_uv else None
    outs = [Array(u_t, u), Array(s_t, s), Array(vt_t, vt)] if compute_uv else [Array(s_t, s)]
    if nb == 0 or (k == 0 and not compute_uv):
        return outs
    if k == 0:  # U and V^T are identities (their full forms) or empty
        for ptr, t in ((u, u_t), (vt, vt_t)):
            lw.fn.memset0(ptr, t.nbytes)
            d = t.shape[-1]
            if d and t.shape[-2] == d:
                lw.loop_nest((nb, d), lambda i, ptr=ptr, d=d: _store(
                    lw, ptr, dt, lw.offset((nb, d, d), [i[0], i[1], i[1]]), _const(lw, dt, 1.0)))
        return outs
    library()
    jobz = ("A" if full_matrices else "S") if compute_uv else "N"
    # gesdd of A^T (our memory as it is: n x m, column-major)
    ucols = n if jobz == "A" else k  # LAPACK's U: n x ucols, our V^T
    vtrows = m if jobz == "A" else k  # LAPACK's V^T: vtrows x m, our U
    ldu, ldvt = max(1, n), max(1, vtrows)
    complex_ = dt.kind == "c"
    lwork = _query("gesdd", dt, [jobz.encode(), n, m, None, n, None, None, ldu, None,
                                 ldvt, None] + [None] * (1 + complex_), 10)[0]
    call = Call(lw, dt)
    work = lw.fn.buffer(lwork * dt.itemsize)
    # zgesdd's real workspace (LAPACK 3.7's bound for jobz "N", else its largest)
    rwork = [lw.fn.buffer(max(7 * k, k * max(5 * k + 7, 2 * max(m, n) + 2 * k + 1))
                          * s_t.dtype.itemsize)] if complex_ else []
    iwork = lw.fn.buffer(8 * k * 8)
    buf = lw.fn.buffer(m * n * dt.itemsize)
    dummy = lw.fn.buffer(64)
    src = lw.materialize(args[0])
    head = [call.char(jobz), call.int(n), call.int(m)]
    lda, ldu_, ldvt_, lwk = call.int(n), call.int(ldu), call.int(ldvt), call.int(lwork)
    site = _site(lw, "SVD did not converge")

    def one(bi):
        lw.fn.memcpy(buf, _at(lw, src.ptr, dt, lw.b.mul(bi, lw.i64(m * n))), m * n * dt.itemsize)
        sb = _at(lw, s, s_t.dtype, lw.b.mul(bi, lw.i64(k)))
        if compute_uv:
            ub = _at(lw, vt, dt, lw.b.mul(bi, lw.i64(ucols * n)))  # LAPACK's U: our V^T
            vb = _at(lw, u, dt, lw.b.mul(bi, lw.i64(m * vtrows)))  # LAPACK's V^T: our U
        else:
            ub = vb = dummy
        info = call("gesdd", *head, buf, lda, sb, ub, ldu_, vb, ldvt_, work, lwk, *rwork, iwork,
                    chars=1)
        _fail_unless_zero(lw, info, site)

    _per_matrix(lw, nb, one)
    return outs


# ------------------------------------------------------------- solve: getrf, getrs

# linalg.py's inlined LU is faster below this size (10^4 8 x 8: 3.5 ms, NumPy 8.5), LAPACK's
# blocked one above it (one 500 x 500: 19 ms inlined, about 3 through getrf)
SOLVE_LAPACK = 32


def lower_solve(lw, args, out_types) -> list:
    """solve_p through LAPACK: getrf of a's memory (a^T in column-major) and getrs with
    trans = "T"; b goes to column-major and back (in place when it is one column)."""
    a, bv = args
    out = out_types[0]
    dt = out.dtype
    n, k = a.type.shape[-1], bv.type.shape[-1]
    nb = math.prod(a.type.shape[:-2])
    x = lw.materialize(bv, lw.out_buffer(0, out)).ptr
    if nb == 0 or k == 0:
        return [Array(out, x)]
    lu = lw.materialize(a, lw.buffer(a.type)).ptr  # a copy getrf may overwrite
    library()
    call = Call(lw, dt)
    nn, kk, trans = call.int(n), call.int(k), call.char("T")
    ipiv = lw.fn.buffer(n * 8)
    col = lw.fn.buffer(n * k * dt.itemsize) if k > 1 else None
    site = _site(lw, "rune_jit solve: the matrix is singular")

    def one(bi):
        m = _at(lw, lu, dt, lw.b.mul(bi, lw.i64(n * n)))
        xb = _at(lw, x, dt, lw.b.mul(bi, lw.i64(n * k)))
        _fail_unless_zero(lw, call("getrf", nn, nn, m, nn, ipiv), site)
        rhs = xb
        if col is not None:
            _transpose_copy(lw, xb, col, dt, n, k)
            rhs = col
        call("getrs", trans, nn, kk, m, nn, ipiv, rhs, nn, chars=1)
        if col is not None:
            _transpose_copy(lw, col, xb, dt, k, n)

    _per_matrix(lw, nb, one)
    return [Array(out, x)]
