"""Linear solves as `scf` loops over tensor elements: LU with partial pivoting and two
triangular solves, in the order LAPACK's unblocked getf2 and trsm compute them (the CPU
backend calls LAPACK; MLIR's upstream dialects have no solve). A zero pivot fails as
singular. The decompositions (cholesky, eigh, qr, svd, lu, triangular_solve, eig) have no MLIR
form: they are LAPACK calls."""

from __future__ import annotations

import numpy as np

from ...ir import Type
from ...ops.linalg import solve_p
from . import scalars
from .arrays import check, extract, ix
from .emit import INDEX, Emitter, Value, rule
from .loops import by_lanes


def get(em: Emitter, m: Value, i: str, j: str) -> Value:
    return Value(extract(em, m, [i, j]), Type(m.type.dtype, ()))


def put(em: Emitter, m: Value, v: Value, i: str, j: str) -> Value:
    return Value(em.op(f"tensor.insert {v} into {m}[{i}, {j}] : {em.ty(m.type)}"), m.type)


def op(em: Emitter, name: str, x: Value, y: Value) -> Value:
    return Value(scalars.ROWS[name](em, x, y), x.type)


def columns(em: Emitter, m: Value, first: str, body) -> Value:
    """`body(column, m) -> m` for each column from `first` to the last."""
    n = em.index(m.type.shape[1])
    return em.counted(ix(em, "subi", n, first), [m], lambda t, v: [
        body(ix(em, "addi", first, t), v[0]).name])[0]


def axpy_row(em: Emitter, m: Value, i: str, j: str, f: Value, first: str) -> Value:
    """Row i of m less f times row j, from column `first`."""
    return columns(em, m, first, lambda c, v: put(
        em, v, op(em, "sub", get(em, v, i, c), op(em, "mul", f, get(em, v, j, c))), i, c))


def swap_rows(em: Emitter, m: Value, i: str, j: str) -> Value:
    def swap(c, v):
        a, b = get(em, v, i, c), get(em, v, j, c)
        return put(em, put(em, v, b, i, c), a, j, c)
    return columns(em, m, em.index(0), swap)


def pivot(em: Emitter, a: Value, j: str) -> str:
    """The row, from j down, of the first largest |a[i, j]|."""
    n, f = em.index(a.type.shape[0]), Type(a.type.dtype, ())

    def better(i, best):
        mag = Value(scalars.ROWS["abs"](em, get(em, a, i, j)), f)
        take = em.op(f"arith.andi {em.op(f'arith.cmpi sge, {i}, {j} : index')}, "
                     f"{scalars.compare(em, 'gt', mag, best[1])} : i1")
        return [em.op(f"arith.select {take}, {i}, {best[0]} : index"),
                scalars.select(em, take, mag, best[1])]
    return em.counted(n, [Value(j, INDEX), em.const(-1, a.type.dtype)], better, "piv")[0].name


def eliminate(em: Emitter, a: Value, b: Value, j: str) -> list[str]:
    """Column j of the LU factorization, applied to b as it goes."""
    p = pivot(em, a, j)
    nonzero = scalars.compare(em, "ne", get(em, a, p, j), em.const(0, a.type.dtype))
    check(em, Value(nonzero, Type(np.dtype(bool), ())), "rune_jit solve: the matrix is singular")
    a, b = swap_rows(em, a, j, p), swap_rows(em, b, j, p)
    r = op(em, "div", em.const(1, a.type.dtype), get(em, a, j, j))
    below = ix(em, "addi", j, em.index(1))

    def row(t, ab):
        i = ix(em, "addi", below, t)
        f = op(em, "mul", get(em, ab[0], i, j), r)
        na = axpy_row(em, put(em, ab[0], f, i, j), i, j, f, below)
        return [na.name, axpy_row(em, ab[1], i, j, f, em.index(0)).name]
    rows = ix(em, "subi", em.index(a.type.shape[0]), below)
    return [v.name for v in em.counted(rows, [a, b], row, "elim")]


def back_substitute(em: Emitter, a: Value, b: Value) -> Value:
    """U x = b, column-oriented from the last row, as trsm computes it."""
    n = a.type.shape[0]

    def step(t, x):
        j = ix(em, "subi", em.index(n - 1), t)
        d = get(em, a, j, j)
        x = columns(em, x[0], em.index(0), lambda c, v: put(
            em, v, op(em, "div", get(em, v, j, c), d), j, c))
        return [em.counted(j, [x], lambda i, y: [axpy_row(
            em, y[0], i, j, get(em, a, i, j), em.index(0)).name])[0].name]
    return em.counted(em.index(n), [b], step, "back")[0]


@rule(solve_p)
def _solve(em, args, out_types):
    a, b = args

    def one(lane, whole):
        la, lb = lane.part(a), lane.part(whole[0])
        la, lb = em.counted(em.index(la.type.shape[0]), [la, lb],
                            lambda j, ab: eliminate(em, ab[0], ab[1], j), "lu")
        return [lane.put(whole[0], back_substitute(em, la, lb))]
    return [v.name for v in by_lanes(em, a.type.shape[:-2], [b], one)]
