"""LU with partial pivoting of small matrices, unrolled in registers: `solve` and `lu` (det,
slogdet, inv's solve) of up to SMALL rows.

The arithmetic is that of the loops that factor bigger matrices (linalg._solve_lower),
in the same order: the first largest pivot of a column, each row's multiplier a
division, back substitution left to right. The matrix and the right-hand sides are
registers and the row swaps are selects, so a small system in a loop step costs its
arithmetic's latency, with no loads, stores or branches: the Kalman filter's 4 x 4
S X = H P ran its pivot search and row swaps as loops over memory (bench KF on znver5:
14.1 ms a call with loops, 11.1 unrolled; C 11.6).
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..codegen import arith as A
from ..codegen.values import Array

SMALL = 4  # rows (and right-hand sides), at most, of a system factored here


def _swap(bld, rows: list, j: int, r: int, is_p: ir.Value) -> None:
    rows[j], rows[r] = ([bld.select(is_p, u, v) for u, v in zip(rows[r], rows[j])],
                        [bld.select(is_p, v, u) for u, v in zip(rows[r], rows[j])])


def factor(lw, m: list[list], rhs: list[list], fail_singular: bool) -> tuple[list, list]:
    """Factor the n x n registers `m` in place (U on and above the diagonal, the
    multipliers below), its row swaps applied to `rhs` too; -> (pivots, perm), i64
    registers as lu_p gives them. A zero pivot fails as singular if `fail_singular`,
    else its column is skipped (multipliers 0), as getrf does."""
    bld, c, n = lw.b, lw.i64, len(m)
    pivots, perm = [], [[c(i)] for i in range(n)]
    for j in range(n):
        best, p = A.absolute(bld, m[j][j]), c(j)
        for r in range(j + 1, n):
            big = A.absolute(bld, m[r][j])
            better = bld.fcmp_ordered(">", big, best)
            best, p = bld.select(better, big, best), bld.select(better, c(r), p)
        pivots.append(p)
        if fail_singular:
            lw.fail_if_any(bld.fcmp_ordered("==", best, ir.Constant(best.type, 0)), "singular")
        for r in range(j + 1, n):
            is_p = bld.icmp_signed("==", p, c(r))
            for rows in (m, rhs, perm):
                _swap(bld, rows, j, r, is_p)
        zero = None if fail_singular else bld.fcmp_ordered(
            "==", m[j][j], ir.Constant(m[j][j].type, 0))
        for r in range(j + 1, n):
            f = bld.fdiv(m[r][j], m[j][j])
            if zero is not None:
                f = bld.select(zero, ir.Constant(f.type, 0), f)
            m[r][j] = f
            m[r][j + 1:] = [bld.fsub(v, bld.fmul(f, u)) for u, v in zip(m[j][j + 1:], m[r][j + 1:])]
            rhs[r] = [bld.fsub(v, bld.fmul(f, u)) for u, v in zip(rhs[j], rhs[r])]
    return pivots, [q for (q,) in perm]


def _load(lw, x, bi: list, rows: int, cols: int) -> list[list]:
    c = lw.i64
    return [[lw.load(x, bi + [c(r), c(j)]) for j in range(cols)] for r in range(rows)]


def solve(lw, a, b, out) -> Array:
    """A X = B for each matrix of a batch; a zero pivot fails as singular."""
    dt, bld, c = out.dtype, lw.b, lw.i64
    n, k = a.type.shape[-1], b.type.shape[-1]
    ptr = lw.out_buffer(0, out)

    def per_batch(bi):
        m, x = _load(lw, a, bi, n, n), _load(lw, b, bi, n, k)
        factor(lw, m, x, True)
        for r in reversed(range(n)):
            for col in range(k):
                v = x[r][col]
                for j in range(r + 1, n):
                    v = bld.fsub(v, bld.fmul(m[r][j], x[j][col]))
                x[r][col] = bld.fdiv(v, m[r][r])
                lw.store_at(ptr, dt, lw.offset(out.shape, bi + [c(r), c(col)]), x[r][col])

    lw.loop_nest(out.shape[:-2], per_batch)
    return Array(out, ptr)


def lu(lw, a, out_types) -> list[Array]:
    """lu_p's [lu, pivots, perm] for each matrix of a batch (a zero pivot is skipped)."""
    out, piv_t, perm_t = out_types
    n, c = out.shape[-1], lw.i64
    ptrs = [lw.out_buffer(i, t) for i, t in enumerate(out_types)]

    def per_batch(bi):
        m = _load(lw, a, bi, n, n)
        pivots, perm = factor(lw, m, [[] for _ in range(n)], False)
        for r in range(n):
            for j in range(n):
                lw.store_at(ptrs[0], out.dtype, lw.offset(out.shape, bi + [c(r), c(j)]),
                            m[r][j])
            for ptr, t, v in ((ptrs[1], piv_t, pivots[r]), (ptrs[2], perm_t, perm[r])):
                lw.store_at(ptr, t.dtype, lw.offset(t.shape, bi + [c(r)]), v)

    lw.loop_nest(out.shape[:-2], per_batch)
    return [Array(t, p) for t, p in zip(out_types, ptrs)]
