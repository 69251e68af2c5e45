"""Gather and scatter: a gather is a lazy value (each element read where it is needed,
fused with each of its consumers, as a slice is); a scatter copies its operand and
writes the updates in row-major order of the index arrays (so a repeated position takes
the last "set"); a large accumulating one, in parts on the pool's threads
(parallel_maps.scatter_parts).
An index out of bounds in mode "raise" fails the call with its value, axis and size."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ...ir import Type
from ...ops.gather import gather_p, scatter_p
from . import arith as A
from .lower import Lowerer, lowering
from .parallel_maps import block_rows, in_blocks, scatter_parts
from .values import Array, Lazy, cost

INT64 = np.dtype(np.int64)
UPDATE_OPS = 4  # an update's operations, about: a read and a write at a computed position


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

    def put(idx, dest):
        pos, ok = _positions(lw, indices, sizes, idx[:nb], mode, sites)

        def write():
            at = lw.offset(out.shape, pos + idx[nb:])
            new = _combine(lw, op, lw.load_at(dest, out.dtype, at), lw.load(u, idx))
            lw.store_at(dest, out.dtype, at, new)
            return []

        if ok is None:
            write()
        else:
            lw.fn.if_else(ok, write, lambda: [])

    work = u.type.size * (cost(u) + sum(cost(i) for i in indices) + UPDATE_OPS)
    parts = 1 if op == "set" or out.dtype.kind not in "fiu" else scatter_parts(
        u.type.shape, out.size, work)
    if parts > 1:
        _in_parts(lw, op, out, ptr, u.type.shape, parts, put)
    else:  # in order: the last of repeated "set"s wins
        lw.loop_nest(u.type.shape, lambda idx: put(idx, ptr))
    return [Array(out, ptr)]


def _identity(op: str, dtype: np.dtype):
    """The value e with op(e, v) == v for every v, bit for bit (a float sum's is -0.0:
    0.0 + -0.0 is 0.0)."""
    if op in ("add", "mul"):
        return (-0.0 if dtype.kind == "f" else 0) if op == "add" else 1
    low = -np.inf if dtype.kind == "f" else np.iinfo(dtype).min
    high = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return low if op == "max" else high


def _in_parts(lw: Lowerer, op: str, out, ptr: ir.Value, shape: tuple, parts: int,
              put) -> None:
    """put(idx, dest) for every index of the updates' `shape`, its rows in `parts` parts
    (parallel_maps.scatter_parts): part 0 into `ptr`, part j into copy j of the output,
    which starts at op's identity; the copies then combine into `ptr`, in order."""
    copies = lw.buffer(Type(out.dtype, (parts - 1,) + out.shape))
    rows = -(-shape[0] // parts)
    identity = lw.const(out.dtype, _identity(op, out.dtype))

    def copy(c) -> ir.Value:
        return lw.address(copies, out.dtype, lw.b.mul(c, lw.i64(out.size)))

    def fill(dest: ir.Value) -> list:
        lw.loop_nest(out.shape, lambda idx: lw.store_at(
            dest, out.dtype, lw.offset(out.shape, idx), identity))
        return []

    def part(j: ir.Value) -> None:
        first = lw.b.icmp_signed("==", j, lw.i64(0))
        dest = lw.b.select(first, ptr, copy(lw.b.sub(j, lw.i64(1))))
        lw.fn.if_else(first, lambda: [], lambda: fill(dest))
        start, stop = block_rows(lw, j, rows, shape[0])
        lw.fn.loop(start, stop, 1, [], lambda r, _: lw.loop_nest(
            shape[1:], lambda idx: put([r] + idx, dest)) or [])

    in_blocks(lw, parts, part)

    def combined(idx):
        at = lw.offset(out.shape, idx)
        acc = lw.load_at(ptr, out.dtype, at)
        for c in range(parts - 1):
            acc = _combine(lw, op, acc, lw.load_at(copy(lw.i64(c)), out.dtype, at))
        lw.store_at(ptr, out.dtype, at, acc)

    lw.loop_nest(out.shape, combined)
