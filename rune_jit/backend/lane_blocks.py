"""Lane blocks: a vmapped iterate whose step works on scalars, run in SIMD registers.

Lanes go in blocks of BLOCK_REGISTERS vectors (32 lanes of float64 with
AVX-512). Each per-lane value of the step is one LLVM vector over the block's
lanes, which LLVM splits into registers; several independent registers per
operation hide the latency of a divide or a square root. A block loops until
its own lanes are done: a lane whose test holds keeps its carry through a
select on the running mask, and the block stops when no lane runs, so a slow
lane holds up only its block. Lanes past the last full block run one at a time
(lane_loops.py). The counted scans of reverse mode run the same way, each block
for the most steps one of its lanes took.
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir
import numpy as np

from ..ir import Region, Type
from . import arith, emit, llvm
from .lower import Lowerer
from .values import Scalar, Value

BLOCK_REGISTERS = 4  # the notes measured 4 vectors of 8 doubles as the sweet spot


def block_size(types: Sequence[Type]) -> int:
    """Lanes per block: BLOCK_REGISTERS registers of the widest dtype in play."""
    widest = max((t.dtype.itemsize for t in types), default=8)
    return BLOCK_REGISTERS * llvm.vector_bits() // (8 * max(widest, 4))


def vectorizable(regions: Sequence[Region], shared: Sequence[Value]) -> bool:
    """A step of scalars and elementwise arithmetic only, reading shared scalars only."""
    def ok(r: Region) -> bool:
        return (all(t.shape == () for t in r.in_types + r.out_types)
                and all("elementwise" in e.prim.traits and not e.regions
                        and all(v.type.shape == () for v in e.outputs) for e in r.eqns))
    return all(ok(r) for r in regions) and all(v.type.shape == () for v in shared)


def _vec_type(t: Type, width: int) -> ir.Type:
    return ir.VectorType(emit.reg_type(t.dtype), width)


def load_block(lw: Lowerer, base: ir.Value, t: Type, first: ir.Value, width: int) -> Scalar:
    """Lanes first..first+width of a buffer of per-lane scalars, as one vector."""
    ptr = lw.address(base, t.dtype, first)
    mem = ir.VectorType(emit.mem_type(t.dtype), width)
    v = lw.b.load(ptr, typ=mem, align=t.dtype.itemsize)
    if t.dtype.kind == "b":
        v = lw.b.icmp_unsigned("!=", v, ir.Constant(mem, [ir.Constant(emit.I8, 0)] * width))
    return Scalar(t, v)


def store_block(lw: Lowerer, base: ir.Value, t: Type, first: ir.Value, v: ir.Value) -> None:
    if t.dtype.kind == "b":
        v = lw.b.zext(v, ir.VectorType(emit.I8, v.type.count))
    lw.b.store(v, lw.address(base, t.dtype, first), align=t.dtype.itemsize)


def _reduce(lw: Lowerer, name: str, v: ir.Value, ret: ir.Type) -> ir.Value:
    return arith.intrinsic(lw.b, f"vector.reduce.{name}", v, ret=ret)


def first_lane(lw: Lowerer, mask: ir.Value) -> ir.Value:
    """The index of the first set lane of a mask."""
    width = mask.type.count
    bits = lw.b.bitcast(mask, ir.IntType(width))
    index = arith.intrinsic(lw.b, "cttz", bits, ir.Constant(emit.I1, 0))
    return lw.b.zext(index, emit.I64) if width < 64 else index


def iterate_blocks(lw: Lowerer, shared: list, laned: list, init: list, outs: list, tapes,
                   out_types, step: Region, until: Region, max_steps: int, n_lanes: int,
                   width: int, site: int) -> None:
    """Run the full blocks of a laned iterate; outputs go to the buffers `outs`."""
    vw = lw.with_width(width)
    nc = len(init)
    per = [t.with_shape(()) for t in out_types[:nc]]
    y_types = [t.with_shape(()) for t in out_types[nc + 1:]]
    i64_vec = ir.VectorType(emit.I64, width)
    zeros = ir.Constant(i64_vec, [ir.Constant(emit.I64, 0)] * width)

    def block(b, _):
        first = lw.b.mul(b, lw.i64(width))
        consts = shared + [load_block(vw, v.ptr, v.type.with_shape(()), first, width)
                           for v in laned]

        def test_of(carries):
            done = vw.scalar(vw.lower_region(until, consts + carries)[0])
            return lw.b.not_(done)

        def values(regs):
            return [Scalar(t, r) for t, r in zip(per, regs)]

        start = [load_block(vw, v.ptr, t, first, width).v for v, t in zip(init, per)]
        running0 = test_of(values(start))

        def test(regs):
            n, running = regs[0], regs[1]
            any_running = _reduce(lw, "or", running, emit.I1)
            stuck = lw.b.and_(any_running, lw.b.icmp_signed(">=", n, lw.i64(max_steps)))
            lane = lw.b.add(first, first_lane(lw, running))
            vw.fail_if_any(stuck, "iterate", site, lane)
            return any_running

        def body(regs):
            n, running, counts, carries = regs[0], regs[1], regs[2], regs[3:]
            new = vw.lower_region(step, consts + values(carries))
            held = [lw.b.select(running, vw.scalar(x), c) for x, c in zip(new[:nc], carries)]
            row = lw.b.add(lw.b.mul(n, lw.i64(n_lanes)), first)
            tapes.reserve(lw.b.add(n, lw.i64(1)))
            for y, base, yt in zip(new[nc:], tapes.pointers(), y_types):
                quiet = lw.b.select(running, vw.scalar(y), vw.const(yt.dtype, 0))
                store_block(vw, base, yt, row, quiet)
            counts = lw.b.add(counts, lw.b.zext(running, i64_vec))
            still = lw.b.and_(running, test_of(values(held)))
            return [lw.b.add(n, lw.i64(1)), still, counts] + held

        final = lw.fn.while_loop([lw.i64(0), running0, zeros] + start, test, body)
        for c, base, t in zip(final[3:], outs[:nc], per):
            store_block(vw, base, t, first, c)
        store_block(vw, outs[nc], Type(np.dtype(np.int64), ()), first, final[2])
        return []

    lw.fn.loop(lw.i64(0), lw.i64(n_lanes // width), 1, [], block)


def counted_scan_blocks(lw: Lowerer, shared: list, counts, laned: list, init: list, xs: list,
                        outs: list, out_types, step: Region, length: int, reverse: bool,
                        n_lanes: int, width: int) -> None:
    """Run the full blocks of a counted scan, each for its own lanes' most steps."""
    vw = lw.with_width(width)
    nc = len(init)
    per = [t.with_shape(()) for t in out_types[:nc]]
    y_types = [t.with_shape(()) for t in out_types[nc:]]
    x_types = [x.type.with_shape(()) for x in xs]

    def block(b, _):
        first = lw.b.mul(b, lw.i64(width))
        consts = shared + [load_block(vw, v.ptr, v.type.with_shape(()), first, width)
                           for v in laned]
        n = arith.convert(lw.b, load_block(vw, counts.ptr, counts.type.with_shape(()), first,
                                           width).v, np.dtype(np.int64))
        n = arith.maximum(lw.b, n, vw.const(np.dtype(np.int64), length), False)
        trips = _reduce(lw, "smax", n, emit.I64)

        def body(t, carries):
            active = lw.b.icmp_signed("<", vw.splat(t), n)
            at = lw.b.add(lw.b.mul(t, lw.i64(n_lanes)), first)
            rows = [load_block(vw, x.ptr, xt, at, width) for x, xt in zip(xs, x_types)]
            new = vw.lower_region(step, consts + [Scalar(t_, c) for t_, c in zip(per, carries)]
                                  + rows)
            for y, base, yt in zip(new[nc:], outs[nc:], y_types):
                store_block(vw, base, yt, at, lw.b.select(active, vw.scalar(y),
                                                          vw.const(yt.dtype, 0)))
            return [lw.b.select(active, vw.scalar(x), c) for x, c in zip(new[:nc], carries)]

        start = [load_block(vw, v.ptr, t, first, width).v for v, t in zip(init, per)]
        if reverse:
            final = lw.fn.loop(lw.b.sub(trips, lw.i64(1)), lw.i64(-1), -1, start, body)
        else:
            final = lw.fn.loop(lw.i64(0), trips, 1, start, body)
        for c, base, t in zip(final, outs[:nc], per):
            store_block(vw, base, t, first, c)
        return []

    lw.fn.loop(lw.i64(0), lw.i64(n_lanes // width), 1, [], block)
