"""Decompositions whose values are complex in compiled code: decomp_memory (a complex
matrix as NumPy's memory of it) through lapack.py's rules, and eig (geev), whose results
are complex whatever its operand.

eig copies each matrix to column-major, as NumPy does before calling geev, so that its
eigenvectors are NumPy's (geev's normalization: unit norm, the largest component real).
A real matrix goes to dgeev/sgeev, whose eigenvalues come as (wr, wi) and whose complex
eigenvectors come in conjugate pairs, v_j = VR_j + i VR_{j+1} and v_{j+1} its conjugate,
assembled into complex memory here as NumPy assembles them.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from ....dtypes import complex_dtype, real_dtype
from ....ir import Type
from ....ops.decomp import DECOMPOSITIONS, decomp_memory_p, eig_p
from ..codegen.lower import LOWERINGS, lowering
from ..codegen.values import Array
from . import lapack as L


@lowering(decomp_memory_p)
def _memory_lower(lw, args, out_types, *, decomp, complex_in, inner):
    """The decomposition's rule on complex views of its operands' memory (row-major);
    its complex results are the memory the rule writes."""
    views = [Array(Type(complex_dtype(a.type.dtype), a.type.shape[:-1]), lw.row_major(a))
             if c else a for a, c in zip(args, complex_in)]
    prim, params = DECOMPOSITIONS[decomp], dict(inner)
    inner_types = prim.rules["shape"](*[v.type for v in views], **params)
    outs = LOWERINGS[prim](lw, views, inner_types, **params)
    return [Array(t, o.ptr) if o.type.dtype.kind == "c" else o for o, t in zip(outs, out_types)]


@lowering(eig_p)
def _eig_lower(lw, args, out_types, *, vectors):
    a, (w_t, *v_t) = args[0], out_types
    dt, n = a.type.dtype, a.type.shape[-1]
    nb = math.prod(a.type.shape[:-2])
    w = lw.out_buffer(0, w_t)
    v = lw.out_buffer(1, v_t[0]) if vectors else None
    outs = [Array(w_t, w)] + ([Array(v_t[0], v)] if vectors else [])
    if n == 0 or nb == 0:
        return outs
    L.library()
    geev = _Geev(lw, dt, n, vectors)
    src = lw.row_major(a)
    site = L._site(lw, "Eigenvalues did not converge")

    def one(bi):
        L._transpose_copy(lw, L._at(lw, src, dt, lw.b.mul(bi, lw.i64(n * n))), geev.a, dt, n, n)
        wb = L._at(lw, w, w_t.dtype, lw.b.mul(bi, lw.i64(n)))
        vb = L._at(lw, v, w_t.dtype, lw.b.mul(bi, lw.i64(n * n))) if vectors else None
        L._fail_unless_zero(lw, geev(wb, vb), site)

    L._per_matrix(lw, nb, one)
    return outs


class _Geev:
    """geev's arguments for n x n matrices of `dtype` (its scratch allocated once), and
    its call on the column-major copy `a`, writing NumPy's complex w and v."""

    def __init__(self, lw, dtype: np.dtype, n: int, vectors: bool):
        self.lw, self.dtype, self.n, self.vectors = lw, dtype, n, vectors
        self.real = dtype.kind == "f"
        part = real_dtype(dtype)
        jobvr = "V" if vectors else "N"
        # (jobvl, jobvr, n, a, lda, w or wr and wi, vl, ldvl, vr, ldvr, work[, rwork])
        w = [None, None] if self.real else [None]
        rest = [None, 1, None, n, None] + ([] if self.real else [None])
        lwork = L._query("geev", dtype, [b"N", jobvr.encode(), n, None, n] + w + rest,
                         10 + self.real)[0]
        call = self.call = L.Call(lw, dtype)
        self.a = lw.fn.buffer(n * n * dtype.itemsize)
        self.vr = lw.fn.buffer(n * n * dtype.itemsize)
        self.work = lw.fn.buffer(lwork * dtype.itemsize)
        self.parts = [lw.fn.buffer(n * part.itemsize) for _ in range(2)] if self.real else []
        self.rwork = [] if self.real else [lw.fn.buffer(2 * n * part.itemsize)]
        self.head = [call.char("N"), call.char(jobvr), call.int(n), self.a, call.int(n)]
        self.lwork, self.one, self.nn = call.int(lwork), call.int(1), call.int(n)

    def __call__(self, w: ir.Value, v: ir.Value | None) -> ir.Value:
        """geev into w (and v), complex memory; -> info."""
        eigenvalues = self.parts if self.real else [w]
        info = self.call("geev", *self.head, *eigenvalues, self.a, self.one, self.vr, self.nn,
                         self.work, self.lwork, *self.rwork, chars=2)
        if self.real:
            self._assemble(w, v)
        elif v is not None:
            self.lw.fn.memcpy(v, self.vr, self.n * self.n * self.dtype.itemsize)
            L._transpose_in_place(self.lw, v, self.dtype, self.n)
        return info

    def _assemble(self, w: ir.Value, v: ir.Value | None) -> None:
        """w_j = wr_j + i wi_j; v's column j from VR's columns j and j + 1 (wi_j > 0), j - 1
        and j (wi_j < 0, the conjugate) or j alone (wi_j = 0)."""
        lw, b, n = self.lw, self.lw.b, self.n
        part = self.dtype
        wr, wi = self.parts
        cplx = complex_dtype(part)
        zero = L._const(lw, part, 0.0)

        def column(j, _):
            re, im = lw.load_at(wr, part, j), lw.load_at(wi, part, j)
            pair = b.insert_element(b.insert_element(L._const(lw, cplx, 0.0), re, lw.i64(0)),
                                    im, lw.i64(1))
            L._store(lw, w, cplx, j, pair)
            if v is None:
                return []
            above, below = b.fcmp_ordered(">", im, zero), b.fcmp_ordered("<", im, zero)
            re_col = b.select(below, b.sub(j, lw.i64(1)), j)
            im_col = b.select(above, b.add(j, lw.i64(1)), j)
            paired = b.or_(above, below)

            def row(i, _):
                x = lw.load_at(self.vr, part, b.add(b.mul(re_col, lw.i64(n)), i))
                y = lw.load_at(self.vr, part, b.add(b.mul(im_col, lw.i64(n)), i))
                y = b.select(paired, b.select(below, b.fneg(y), y), zero)
                z = b.insert_element(b.insert_element(L._const(lw, cplx, 0.0), x, lw.i64(0)),
                                     y, lw.i64(1))
                L._store(lw, v, cplx, b.add(b.mul(i, lw.i64(n)), j), z)
                return []
            lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], row)
            return []

        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], column)
