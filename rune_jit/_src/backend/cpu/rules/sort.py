"""Sorting with libc's qsort: each row's (key, index) pairs sorted by a comparator emitted
into the module, keys first (NaNs last, or first descending) and then indices, which
makes the sort stable whatever qsort does; then the values and the permutation are
written out."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ....ops.sort import sort_p
from ..codegen.emit import I32, I64, PTR, mem_type
from ..codegen.lower import Lowerer, lowering
from ..codegen.values import Array

PAIR = 16  # bytes of a (key, index) pair: the key in the first 8, the index in the last 8


def _comparator(module: ir.Module, dtype: np.dtype, descending: bool) -> ir.Function:
    """int cmp(pair *a, pair *b), for qsort: keys ascending (NaNs last), or descending
    (NaNs first); ties by index, ascending."""
    name = f"rune.sort.cmp.{dtype.str[1:]}.{'desc' if descending else 'asc'}"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(I32, [PTR, PTR]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block())
    pa, pb = fn.args
    key_t = mem_type(dtype)

    def key(p):
        v = b.load(p, typ=key_t)
        return b.fpext(v, ir.DoubleType()) if dtype.kind == "f" and dtype.itemsize < 8 else v

    def index(p):
        return b.load(b.gep(p, [ir.Constant(I64, 8)], source_etype=ir.IntType(8)), typ=I64)

    ka, kb = key(pa), key(pb)
    if descending:
        ka, kb = kb, ka
    one, minus, zero = (ir.Constant(I32, v) for v in (1, -1, 0))
    if dtype.kind == "f":
        nan_a, nan_b = b.fcmp_unordered("uno", ka, ka), b.fcmp_unordered("uno", kb, kb)
        less, greater = b.fcmp_ordered("<", ka, kb), b.fcmp_ordered(">", ka, kb)
        # a NaN is greater than any number (ascending: last), and equal to a NaN
        less = b.or_(less, b.and_(nan_b, b.not_(nan_a)))
        greater = b.or_(greater, b.and_(nan_a, b.not_(nan_b)))
    else:
        cmp = b.icmp_unsigned if dtype.kind in "ub" else b.icmp_signed
        less, greater = cmp("<", ka, kb), cmp(">", ka, kb)
    by_index = b.select(b.icmp_signed("<", index(pa), index(pb)), minus, one)
    b.ret(b.select(less, minus, b.select(greater, one, by_index)))
    return fn


@lowering(sort_p)
def _sort(lw: Lowerer, args, out_types, *, descending):
    (x,) = args
    values_t, perm_t = out_types
    n = x.type.shape[-1]
    rows = values_t.size // n if n else 0
    x = lw.materialize(x)
    values, perm = lw.out_buffer(0, values_t), lw.out_buffer(1, perm_t)
    pairs = lw.fn.buffer(max(n, 1) * PAIR)
    dtype = x.type.dtype
    cmp = _comparator(lw.fn.module, dtype, descending)
    key_t = mem_type(dtype)

    def slot(j, field):
        return lw.b.gep(pairs, [lw.b.add(lw.b.mul(j, lw.i64(PAIR)), lw.i64(field))],
                        source_etype=ir.IntType(8))

    def row(r, _):
        base = lw.b.mul(r, lw.i64(n))

        def fill(j, _):
            at = lw.b.add(base, j)
            lw.b.store(lw.b.load(lw.address(x.ptr, dtype, at), typ=key_t), slot(j, 0))
            lw.b.store(j, slot(j, 8))
            return []

        def out(j, _):
            at = lw.b.add(base, j)
            lw.b.store(lw.b.load(slot(j, 0), typ=key_t), lw.address(values, dtype, at))
            lw.store_at(perm, np.dtype(np.int64), at, lw.b.load(slot(j, 8), typ=I64))
            return []

        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], fill)
        lw.fn.call("qsort", ir.VoidType(), [pairs, lw.i64(n), lw.i64(PAIR), cmp])
        lw.fn.loop(lw.i64(0), lw.i64(n), 1, [], out)
        return []

    lw.fn.loop(lw.i64(0), lw.i64(rows), 1, [], row)
    return [Array(values_t, values), Array(perm_t, perm)]
