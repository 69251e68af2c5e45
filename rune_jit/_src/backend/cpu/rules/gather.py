"""Gather and scatter: a gather is a lazy value (each element read where it is needed,
fused with each of its consumers, as a slice is); a scatter copies its operand and
writes the updates in row-major order of the index arrays (so a repeated position takes
the last "set"); a large accumulating one, in parts on the pool's threads
(parallel_maps.scatter_parts).
An index_check fails the call, naming an index out of bounds, its axis and its size: it
folds the index array to its least and greatest entries (a loop LLVM vectorizes), and
only if one is out of bounds looks again for the first entry that is."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ....ir import Type
from ....ops.gather import gather_p, index_check_p, scatter_p
from ..codegen import arith as A
from ..codegen.lower import Lowerer, lowering
from .parallel_maps import block_rows, in_blocks, scatter_parts
from ..codegen.values import Array, Lazy, cost

INT64 = np.dtype(np.int64)
UPDATE_OPS = 4  # an update's operations, about: a read and a write at a computed position


def _position(lw: Lowerer, i: ir.Value, n: int, mode: str
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
    if mode == "checked":
        return wrapped, None
    inside = b.and_(b.icmp_signed(">=", wrapped, zero), b.icmp_signed("<", wrapped, size))
    return b.select(inside, wrapped, zero), inside


def _positions(lw: Lowerer, indices: list, sizes: tuple, at_b: list, mode: str
               ) -> tuple[list[ir.Value], ir.Value | None]:
    """The position along each indexed axis of index entry `at_b`, and whether all are
    inside (None: always)."""
    pos, ok = [], None
    for i, n in zip(indices, sizes):
        p, inside = _position(lw, A.convert(lw.b, lw.load(i, at_b), INT64), n, mode)
        pos.append(p)
        if inside is not None:
            ok = inside if ok is None else lw.b.and_(ok, inside)
    return pos, ok


@lowering(index_check_p)
def _index_check(lw, args, out_types, *, size, axis):
    (i,) = args
    signed = i.type.dtype.kind == "i"
    wide = INT64 if signed else np.dtype(np.uint64)  # an unsigned index never wraps
    site = lw.errors.add("index", axis=axis, size=size)

    # (lw.b, not a builder kept here: a lazy value may be read in an outlined function)
    def entry(idx):
        return A.convert(lw.b, lw.load(i, idx), wide)

    def bad(lo: ir.Value, hi: ir.Value) -> ir.Value:
        over = A.compare(lw.b, ">=", hi, lw.const(wide, size))
        return (lw.b.or_(over, A.compare(lw.b, "<", lo, lw.const(wide, -size))) if signed
                else over)

    def check(idx) -> None:
        v = entry(idx)
        lw.fail_if_any(bad(v, v), "index", site, A.convert(lw.b, v, INT64))

    if lw.read_whole(0):  # each index is read where it is used, and checked there
        return [Lazy(i.type, lambda idx: check(idx) or lw.load(i, idx), cost(i) + 1)]
    i = lw.materialize(i) if cost(i) > 0 else i  # read twice: here, and where it is used
    info = np.iinfo(wide)
    lo, hi = lw.fold(i.type.shape, [lw.const(wide, info.max), lw.const(wide, info.min)],
                     lambda idx, v: [A.maximum(lw.b, v[0], entry(idx), False),
                                     A.maximum(lw.b, v[1], entry(idx), True)])
    with lw.b.if_then(lw.any_lane(bad(lo, hi)), likely=False):  # which one, for the message
        lw.elements(i.type.shape, check)
    return [i]


@lowering(gather_p)
def _gather(lw, args, out_types, *, mode, fill_value):
    x, *indices = args
    out = out_types[0]
    if cost(x) > 0 and out.size > x.type.size:  # else each read computes x's element again
        x = lw.materialize(x)
    k, nb = len(indices), indices[0].type.ndim
    sizes = x.type.shape[:k]

    def at(idx):
        pos, ok = _positions(lw, indices, sizes, idx[:nb], mode)
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
    sizes = out.shape[:k]

    def put(idx, dest):
        pos, ok = _positions(lw, indices, sizes, idx[:nb], mode)

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
