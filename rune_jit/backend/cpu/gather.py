"""Gather and scatter: a gather is a lazy value (each element read where it is needed,
fused with each of its consumers, as a slice is); a scatter copies its operand and
writes the updates in row-major order of the index arrays (so a repeated position takes
the last "set").
An index out of bounds in mode "raise" fails the call with its value, axis and size."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ...ops.gather import gather_p, scatter_p
from . import arith as A
from .lower import Lowerer, lowering
from .values import Array, Lazy, cost

INT64 = np.dtype(np.int64)


def _position(lw: Lowerer, i: ir.Value, n: int, mode: str, site: int | None
              ) -> tuple[ir.Value, ir.Value | None]:
    """(the position index `i` stands for on an axis of size `n`, whether it is inside;
    None when the mode makes every index inside)."""
    b, zero, size = lw.b, lw.i64(0), lw.i64(n)
    if mode == "clip":
        return A.maximum(b, A.maximum(b, i, zero, True), lw.i64(max(n - 1, 0)), False), None
    if mode == "wrap":
        r = b.srem(i, size) if n else i
        return (b.select(b.icmp_signed("<", r, zero), b.add(r, size), r) if n else r), None
    wrapped = b.select(b.icmp_signed("<", i, zero), b.add(i, size), i)
    inside = b.and_(b.icmp_signed(">=", wrapped, zero), b.icmp_signed("<", wrapped, size))
    if mode == "raise":
        lw.fail_if_any(b.not_(inside), "index", site, i)
        return wrapped, None
    return b.select(inside, wrapped, zero), inside


def _positions(lw: Lowerer, indices: list, sizes: tuple, at_b: list, mode: str,
               sites: list) -> tuple[list[ir.Value], ir.Value | None]:
    """The position along each indexed axis of index entry `at_b`, and whether all are
    inside (None: always)."""
    pos, ok = [], None
    for i, n, site in zip(indices, sizes, sites):
        p, inside = _position(lw, A.convert(lw.b, lw.load(i, at_b), INT64), n, mode, site)
        pos.append(p)
        if inside is not None:
            ok = inside if ok is None else lw.b.and_(ok, inside)
    return pos, ok


def _sites(lw: Lowerer, sizes: tuple, mode: str) -> list:
    return [lw.errors.add("index", axis=a, size=n) if mode == "raise" else None
            for a, n in enumerate(sizes)]


@lowering(gather_p)
def _gather(lw, args, out_types, *, mode, fill_value):
    x, *indices = args
    out = out_types[0]
    if cost(x) > 0 and out.size > x.type.size:  # else each read computes x's element again
        x = lw.materialize(x)
    k, nb = len(indices), indices[0].type.ndim
    sizes, sites = x.type.shape[:k], _sites(lw, x.type.shape[:k], mode)

    def at(idx):
        pos, ok = _positions(lw, indices, sizes, idx[:nb], mode, sites)
        value = lw.load(x, pos + idx[nb:])
        return value if ok is None else lw.b.select(ok, value, lw.const(out.dtype, fill_value))

    return [Lazy(out, at, cost(x) + sum(cost(i) for i in indices))]  # reads, no arithmetic


def _combine(lw: Lowerer, op: str, old: ir.Value, new: ir.Value) -> ir.Value:
    if op == "set":
        return new
    if op == "add":
        return A.add(lw.b, old, new)
    if op == "mul":
        return A.mul(lw.b, old, new)
    return A.maximum(lw.b, old, new, op == "max")


@lowering(scatter_p)
def _scatter(lw, args, out_types, *, op, mode):
    x, *rest = args
    *indices, u = rest
    out = out_types[0]
    ptr = lw.materialize(x, lw.out_buffer(0, out)).ptr  # a copy: x itself is not written
    k, nb = len(indices), indices[0].type.ndim
    sizes, sites = out.shape[:k], _sites(lw, out.shape[:k], mode)

    def put(idx):
        pos, ok = _positions(lw, indices, sizes, idx[:nb], mode, sites)

        def write():
            at = lw.offset(out.shape, pos + idx[nb:])
            new = _combine(lw, op, lw.load_at(ptr, out.dtype, at), lw.load(u, idx))
            lw.store_at(ptr, out.dtype, at, new)
            return []

        if ok is None:
            write()
        else:
            lw.fn.if_else(ok, write, lambda: [])

    lw.loop_nest(u.type.shape, put)  # in order: the last of repeated "set"s wins
    return [Array(out, ptr)]
