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

from typing import Callable, Sequence

import llvmlite.ir as ir
import numpy as np

from ....ir import Region
from ....ops.callback import debug_callback_p
from ....ops.check import check_p
from ....ops.pure_callback import pure_callback_p
from ..codegen import arith, emit
from ..runtime import llvm, threads
from ..codegen.lower import Lowerer
from ..codegen.values import Array, Scalar, Value

BLOCK_REGISTERS = 4  # the notes measured 4 vectors of 8 doubles as the sweet spot
INT64 = np.dtype(np.int64)


def vectorizable(regions: Sequence[Region], shared: Sequence[Value]) -> bool:
    """A step of scalars and elementwise arithmetic (and checks of scalars) only, reading
    shared scalars only."""
    def ok(r: Region) -> bool:
        return (all(t.shape == () for t in r.in_types + r.out_types)
                and all(("elementwise" in e.prim.traits and not e.regions
                         and all(v.type.shape == () for v in e.outputs))
                        or (e.prim is check_p and all(a.type.shape == () for a in e.inputs))
                        for e in r.eqns))
    return all(ok(r) for r in regions) and all(v.type.shape == () for v in shared)


def block_width(regions: Sequence[Region], shared: Sequence[Value],
                laned: Sequence[Array]) -> int | None:
    """Lanes per block: BLOCK_REGISTERS registers of the widest dtype in play; None when
    the regions cannot run in blocks."""
    if not vectorizable(regions, shared):
        return None
    widest = max((v.type.dtype.itemsize for v in laned), default=8)
    return BLOCK_REGISTERS * llvm.vector_bits() // (8 * max(widest, 4))


def load_block(vw: Lowerer, x: Array, first: ir.Value) -> Scalar:
    """Lanes first..first+width of an array of per-lane scalars, as one vector."""
    t = x.type.with_shape(())
    return Scalar(t, vw.load_at(x.ptr, t.dtype, first, vw.width))


def _reduce(vw: Lowerer, name: str, v: ir.Value, ret: ir.Type) -> ir.Value:
    return arith.intrinsic(vw.b, f"vector.reduce.{name}", v, ret=ret)


def first_lane(vw: Lowerer, mask: ir.Value) -> ir.Value:
    """The index of the first set lane of a mask."""
    width = mask.type.count
    bits = vw.b.bitcast(mask, ir.IntType(width))
    index = arith.intrinsic(vw.b, "cttz", bits, ir.Constant(emit.I1, 0))
    return vw.b.zext(index, emit.I64) if width < 64 else index


def by_blocks(lw: Lowerer, shared: list, laned: list[Array], init: list[Array], outs: list,
              n_lanes: int, width: int, run: Callable, parallel: bool = False) -> None:
    """Each full block of `width` lanes: `run(vw, first, consts, carries)` runs its loop
    from its lanes of `laned` and `init` and returns its final carries, which go to its
    lanes of the buffers `outs` (or None: it stored them). With `parallel`, on the pool's threads (threads.py)."""
    def block(j: ir.Value) -> None:
        vw = lw.with_width(width)
        first = vw.b.mul(j, vw.i64(width))
        consts = shared + [load_block(vw, v, first) for v in laned]
        final = run(vw, first, consts, [load_block(vw, v, first).v for v in init])
        for c, base, v in zip(final or [], outs, init):
            vw.store_at(base, v.type.dtype, first, c)

    if parallel:
        threads.parallel_loop(lw, n_lanes // width, block)
    else:
        lw.fn.loop(lw.i64(0), lw.i64(n_lanes // width), 1, [], lambda j, _: block(j) or [])


# Lanes times equations of the step (and test) below which a loop with lanes stays on the
# calling thread: starting the pool's threads on a region costs some microseconds.
PARALLEL_WORK = 1 << 15
LANES_PER_TASK = 8  # lanes run one at a time (no lane blocks): a thread takes this many
CALLBACKS = (debug_callback_p, pure_callback_p)  # Python's, in order, on the caller's thread


def in_parallel(lw: Lowerer, regions: Sequence[Region], n_lanes: int, width: int | None
                ) -> bool:
    """Whether the lanes of a loop with lanes run on the pool's threads (its blocks of
    `width` lanes, or groups of LANES_PER_TASK lanes run one at a time)."""
    if not threads.may_start(lw) or n_lanes // (width or LANES_PER_TASK) < 2:
        return False
    return (n_lanes * sum(len(r.eqns) + 1 for r in regions) >= PARALLEL_WORK
            and not any(e.prim in CALLBACKS for e in _equations(regions)))


def _equations(regions: Sequence[Region]):
    for r in regions:
        for e in r.eqns:
            yield e
            yield from _equations(e.regions)


class Reserved:
    """Tapes grown to their max_steps rows before a parallel region (threads must not
    grow them under each other): reserving is free, the pointers are fixed."""

    def __init__(self, pointers: list):
        self._pointers = list(pointers)

    def reserve(self, rows: ir.Value) -> None:
        pass

    def pointers(self) -> list:
        return self._pointers


def iterate_block(vw: Lowerer, first: ir.Value, consts: list, n_shared: int, start: list,
                  step: Region, until: Region, tapes, outs: list, steps_out: ir.Value,
                  max_steps: int, n_lanes: int, site: int, donors: bool) -> list | None:
    """One block of a laned iterate, until no lane runs; each lane's steps taken go to
    `steps_out`. -> the final carries; with `donors`, None: each lane's went to `outs`
    when it stopped.

    Without `donors`, a lane that stopped keeps its carry through a select and computes
    the step on it, unseen (`observable`). With them, the step runs on operands (the
    laned consts after the first `n_shared`, and the carries) where a lane that stopped
    holds those of the first running lane, its donor: it computes its donor's step, so
    the step is evaluated only at points a running lane is at. Between two stops a
    donated lane needs nothing (its step's results are its donor's next operands, bit
    for bit): the lanes are donated again, and the stopped ones' carries stored, only
    when the running mask changes."""
    b, nc = vw.b, len(start)
    shared, laned = consts[:n_shared], [c.v for c in consts[n_shared:]]
    l_types, c_types = [c.type for c in consts[n_shared:]], step.out_types[:nc]

    def values(types, regs):
        return [Scalar(t, r) for t, r in zip(types, regs)]

    def running(lan, carries):
        args = shared + values(l_types, lan) + values(c_types, carries)
        return b.not_(vw.scalar(vw.lower_region(until, args)[0]))

    def test(regs):
        n, mask = regs[0], regs[1]
        any_running = _reduce(vw, "or", mask, emit.I1)
        stuck = b.and_(any_running, b.icmp_signed(">=", n, vw.i64(max_steps)))
        vw.fail_if_any(stuck, "iterate", site, b.add(first, first_lane(vw, mask)))
        return any_running

    def body(regs):
        n, mask, counts, old, lan = regs[0], regs[1], regs[2], regs[3:3 + nc], regs[3 + nc:]
        lan = lan or laned  # (without donors, the laned operands are the block's own)
        vw.poll_interrupt(n, step)
        vw.running = mask
        new = vw.lower_region(step, shared + values(l_types, lan) + values(c_types, old))
        vw.running = None
        carries = [vw.scalar(x) if donors else b.select(mask, vw.scalar(x), c)
                   for x, c in zip(new[:nc], old)]
        at = b.add(b.mul(n, vw.i64(n_lanes)), first)
        tapes.reserve(b.add(n, vw.i64(1)))
        for y, base, t in zip(new[nc:], tapes.pointers(), step.out_types[nc:]):
            vw.store_at(base, t.dtype, at, b.select(mask, vw.scalar(y), vw.const(t.dtype, 0)))
        counts = b.add(counts, b.zext(mask, counts.type))
        now = b.and_(mask, running(lan, carries))
        ops = (_donate_on_stop(vw, first, outs, c_types, mask, now, carries, lan) if donors
               else carries)
        return [b.add(n, vw.i64(1)), now, counts] + ops

    mask = running(laned, start)
    regs = [vw.i64(0), mask, vw.const(INT64, 0)] + start
    if donors:
        for c, base, t in zip(start, outs, c_types):  # the lanes that take no step
            vw.store_at(base, t.dtype, first, c)
        regs = regs[:3] + donated(vw, mask, start + laned)
    final = vw.fn.while_loop(regs, test, body)
    vw.store_at(steps_out, INT64, first, final[2])
    return None if donors else final[3:3 + nc]


def _donate_on_stop(vw: Lowerer, first: ir.Value, outs: list, types: list, mask: ir.Value,
                    now: ir.Value, carries: list, lan: list) -> list:
    """The operands of a block's next step (`carries` + `lan`): when lanes on `mask` are
    off `now` (they stopped), their carries go to `outs` and they take their donor's."""
    b = vw.b

    def stopped():
        gone = b.and_(mask, b.not_(now))
        for c, base, t in zip(carries, outs, types):
            kept = vw.load_at(base, t.dtype, first, vw.width)
            vw.store_at(base, t.dtype, first, b.select(gone, c, kept))
        return donated(vw, now, carries + lan)

    changed = b.icmp_unsigned("!=", _bits(vw, now), _bits(vw, mask))
    return vw.fn.if_else(changed, stopped, lambda: carries + lan)


def _bits(vw: Lowerer, mask: ir.Value) -> ir.Value:
    return vw.b.bitcast(mask, ir.IntType(mask.type.count))


def donated(vw: Lowerer, mask: ir.Value, regs: list) -> list:
    """`regs` (vectors over a block's lanes) where the lanes off `mask` hold the value of
    its first lane on it (any, if none is: the block is done)."""
    lane = vw.b.and_(first_lane(vw, mask), vw.i64(mask.type.count - 1))
    return [vw.b.select(mask, r, vw.splat(vw.b.extract_element(r, lane))) for r in regs]


def counted_scan_block(vw: Lowerer, first: ir.Value, consts: list, n_shared: int,
                       start: list, step: Region, counts: Array, xs: list[Array],
                       ys_out: list, length: int, reverse: bool, n_lanes: int,
                       donors: bool) -> list[ir.Value]:
    """One block of a counted scan, for the most steps one of its lanes takes; a lane past
    its count keeps its carry and writes zero ys. With `donors`, while some lane is past
    its count, the step runs there on the operands of the first lane that is not (its
    donor: see `iterate_block`). -> the final carries."""
    b, nc = vw.b, len(start)
    shared, laned = consts[:n_shared], [c.v for c in consts[n_shared:]]
    types = ([c.type for c in consts[n_shared:]] + step.out_types[:nc]
             + [x.type.with_shape(()) for x in xs])
    n = arith.convert(b, load_block(vw, counts, first).v, INT64)
    n = arith.maximum(b, n, vw.const(INT64, length), False)

    def body(t, carries):
        vw.poll_interrupt(t, step)
        active = b.icmp_signed("<", vw.splat(t), n)
        at = b.add(b.mul(t, vw.i64(n_lanes)), first)
        own = laned + list(carries) + [load_block(vw, x, at).v for x in xs]
        ops = own if not donors else vw.fn.if_else(
            _reduce(vw, "and", active, emit.I1), lambda: own, lambda: donated(vw, active, own))
        new = vw.lower_region(step, shared + [Scalar(t_, r) for t_, r in zip(types, ops)])
        for y, base, yt in zip(new[nc:], ys_out, step.out_types[nc:]):
            zero = vw.const(yt.dtype, 0)
            vw.store_at(base, yt.dtype, at, b.select(active, vw.scalar(y), zero))
        return [b.select(active, vw.scalar(x), c) for x, c in zip(new[:nc], carries)]

    trips = _reduce(vw, "smax", n, emit.I64)
    return vw.fn.counted_loop(trips, reverse, start, body)
