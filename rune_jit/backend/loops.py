"""Loops in native code: scan as a counted loop, iterate as a while loop, lanes apart.

A carry of shape () lives in a register (a phi). A larger carry lives in two
buffers that swap each step: the step writes the next carry into the buffer
the current one does not use, so no step allocates and none copies a carry it
leaves unchanged. A small one (emit.SMALL_BYTES) is copied back in place instead,
so that LLVM can keep it in registers. Rows of xs are read in place; each y is
written straight into its row of the stacked output.

Loops with lanes (a vmapped iterate and the counted scans of its reverse mode)
run their per-lane step one lane at a time here; lane_blocks.py runs blocks of
lanes together in vector registers where the step allows it.
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir
from ..ir import Region, Type
from . import arith, emit
from .emit import SMALL_BYTES
from .lower import Lowerer
from .values import Array, Lazy, Scalar, Value, row_bytes


class Carries:
    """Loop-carried values: registers for scalars, a pair of swapping buffers otherwise.
    A small carry's pair is a buffer and its copy (no swap), so that both are fixed
    stack slots LLVM keeps in registers (emit.SMALL_BYTES)."""

    def __init__(self, lw: Lowerer, types: Sequence[Type]):
        self.lw, self.types = lw, list(types)
        self.spare = [None if t.shape == () else lw.buffer(t) for t in self.types]

    def start(self, values: Sequence[Value]) -> list[ir.Value]:
        regs = []
        for v, t, spare in zip(values, self.types, self.spare):
            if spare is None:
                regs.append(self.lw.scalar(v))
            else:
                first = self.lw.materialize(v, self.lw.buffer(t)).ptr
                regs += [first, spare]
        return regs

    def values(self, regs: Sequence[ir.Value]) -> list[Value]:
        it, out = iter(regs), []
        for t, spare in zip(self.types, self.spare):
            out.append(Scalar(t, next(it)) if spare is None else Array(t, next(it)))
            if spare is not None:
                next(it)
        return out

    def step(self, regs: Sequence[ir.Value], new: Sequence[Value]) -> list[ir.Value]:
        """The registers after a step that returned `new`. Every new carry is computed
        before any is copied in place: one may read another's current buffer."""
        it, out, copies = iter(regs), [], []
        for v, spare in zip(new, self.spare):
            if spare is None:
                next(it)
                out.append(self.lw.scalar(v))
                continue
            cur, other = next(it), next(it)
            if isinstance(v, Array) and v.ptr is cur:  # unchanged: no copy, no swap
                out += [cur, other]
                continue
            self.lw.store(v, other)
            if v.type.nbytes <= SMALL_BYTES:  # computed aside, copied in place below
                copies.append((Array(v.type, other), cur))
                out += [cur, other]
            else:
                out += [other, cur]
        for v, cur in copies:
            self.lw.store(v, cur)
        return out


class Tapes:
    """The tapes of an iterate: one row per step, grown (doubling) as steps are taken,
    so memory follows the steps a loop takes, not its max_steps. A tape holds at least
    one row, even for a loop that takes no step, so that a read of a row it does not
    hold can read its last one instead (see `Lowerer.load`)."""

    FIRST_ROWS = 16

    def __init__(self, lw: Lowerer, types: Sequence[Type], max_steps: int):
        self.lw, self.types, self.max_steps = lw, list(types), max_steps
        self.slots = [lw.fn.growable_slot() for _ in self.types]
        self.capacity = ir.IRBuilder(lw.fn.prologue).alloca(emit.I64)
        lw.fn.at_entry.store(ir.Constant(emit.I64, 0), self.capacity)
        self.reserve(lw.i64(1))

    def reserve(self, rows: ir.Value) -> None:
        """Room for `rows` rows in every tape."""
        if not self.types:
            return
        lw, b = self.lw, self.lw.b
        cap = b.load(self.capacity, typ=emit.I64)

        def grow():
            new = arith.maximum(b, b.mul(cap, lw.i64(2)), lw.i64(self.FIRST_ROWS), True)
            new = arith.maximum(b, arith.maximum(b, new, rows, True), lw.i64(self.max_steps),
                                False)
            for slot, t in zip(self.slots, self.types):
                old = b.load(slot, typ=emit.PTR)
                ptr = lw.fn.call("realloc", emit.PTR, [old, b.mul(new, lw.i64(row_bytes(t)))])
                lw.fail_if_any(b.icmp_unsigned("==", ptr, ir.Constant(emit.PTR, None)), "memory")
                b.store(ptr, slot)
            b.store(new, self.capacity)
            return []

        lw.fn.if_else(b.icmp_signed(">", rows, cap), grow, lambda: [])

    def pointers(self) -> list[ir.Value]:
        return [self.lw.b.load(s, typ=emit.PTR) for s in self.slots]

    def arrays(self) -> list[Array]:
        rows = self.lw.b.load(self.capacity, typ=emit.I64)
        return [Array(t, p, rows) for t, p in zip(self.types, self.pointers())]


def row(lw: Lowerer, x: Array, t: Type, index: ir.Value) -> Value:
    """Element `index` of a buffer of values of type `t`, read in place (a scalar loads)."""
    return lw.settle(Array(t, row_pointer(lw, x.ptr, t, index)))


def row_pointer(lw: Lowerer, base: ir.Value, t: Type, index: ir.Value) -> ir.Value:
    return lw.address(base, t.dtype, lw.b.mul(index, lw.i64(t.size)))


def lower_scan(lw: Lowerer, args, out_types, *, step: Region, num_carry, num_laned, length,
               reverse, counted, num_captures):
    from ..ops.scan import Layout

    lay = Layout(len(args), dict(num_captures=num_captures, counted=counted,
                                 num_laned=num_laned, num_carry=num_carry))
    caps, counts, laned, init, xs = lay.operands(args)
    if counted:
        from .lane_loops import lower_counted_scan

        return lower_counted_scan(lw, caps, counts, laned, init, xs, out_types, step, length,
                                  reverse)
    nc = num_carry
    ys = [lw.out_buffer(nc + i, t) for i, t in enumerate(out_types[nc:])]
    y_rows = [t.with_shape(t.shape[1:]) for t in out_types[nc:]]
    carries = Carries(lw, out_types[:nc])
    x_rows = [x.type.with_shape(x.type.shape[1:]) for x in xs]
    blocked = [isinstance(x, Lazy) and x.cost > 0 for x in xs]
    block = _block_rows(x_rows, blocked, length)
    xs = [x if b else lw.materialize(x) for x, b in zip(xs, blocked)]
    buffers = [lw.buffer(xt.with_shape((block,) + xt.shape)) if b else None
               for xt, b in zip(x_rows, blocked)]

    def body(t, i, regs):  # step t, row i of the block buffers
        rows = [row(lw, Array(xt, buf), xt, i) if buf is not None else row(lw, x, xt, t)
                for x, xt, buf in zip(xs, x_rows, buffers)]
        outs = lw.lower_region(step, caps + carries.values(regs) + rows)
        for y, base, yt in zip(outs[nc:], ys, y_rows):
            lw.store(y, row_pointer(lw, base, yt, t))
        return carries.step(regs, outs[:nc])

    def one_block(j, regs):
        t0 = lw.b.mul(j, lw.i64(block))
        count = arith.maximum(lw.b, lw.b.sub(lw.i64(length), t0), lw.i64(block), False)
        for x, xt, buf in zip(xs, x_rows, buffers):
            if buf is not None:  # computed for a block of rows at once: vectorized
                _fill_rows(lw, x, xt, buf, t0, count)
        return lw.fn.counted_loop(count, reverse, regs,
                                  lambda i, r: body(lw.b.add(t0, i), i, r))

    n_blocks = lw.i64(-(-length // block))
    final = lw.fn.counted_loop(n_blocks, reverse, carries.start(init), one_block)
    return carries.values(final) + [Array(t, p) for t, p in zip(out_types[nc:], ys)]


BLOCK_BYTES = 32 * 1024  # rows of lazy xs computed per block: they stay in cache
# At most this many rows a block, so that the CPU computes the next block's rows (wide,
# independent work) while the recurrence of this one (a latency-bound chain) still runs:
# W1 and W2 ran 20-30% faster with 16 rows than with 4096; 64 was slower again.
BLOCK_ROWS = 16


def _block_rows(x_rows: list[Type], blocked: list[bool], length: int) -> int:
    """Rows per block: the whole scan at once unless some xs are computed (lazy) rows,
    which are computed a block at a time into a buffer that stays in cache."""
    nbytes = sum(t.nbytes for t, b in zip(x_rows, blocked) if b)
    if not nbytes:
        return max(length, 1)
    return max(1, min(length, BLOCK_ROWS, BLOCK_BYTES // nbytes))


def _fill_rows(lw: Lowerer, x: Lazy, xt: Type, buf, t0, count) -> None:
    def one(i, _):
        lw.elements(xt.shape, lambda idx: lw.store_at(
            buf, xt.dtype, lw.b.add(lw.b.mul(i, lw.i64(xt.size)), lw.offset(xt.shape, idx)),
            lw.load(x, [lw.b.add(t0, i)] + idx)))
        return []

    lw.fn.loop(lw.i64(0), count, 1, [], one)


def lower_iterate(lw: Lowerer, args, out_types, *, step: Region, until: Region, num_carry,
                  num_laned, max_steps, lanes, shown, num_captures):
    k = num_captures
    caps, laned, init = list(args[:k]), list(args[k:k + num_laned]), list(args[k + num_laned:])
    site = lw.errors.add("iterate", max_steps=max_steps, lanes=tuple(lanes), shown=tuple(shown))
    if lanes:
        from .lane_loops import lower_laned_iterate

        return lower_laned_iterate(lw, caps, laned, init, out_types, step, until, max_steps,
                                   tuple(lanes), site)
    nc = num_carry
    tapes = Tapes(lw, out_types[nc + 1:], max_steps)
    rows = [t.with_shape(t.shape[1:]) for t in out_types[nc + 1:]]

    def record(n, ys):
        tapes.reserve(lw.b.add(n, lw.i64(1)))
        for y, base, yt in zip(ys, tapes.pointers(), rows):
            lw.store(y, row_pointer(lw, base, yt, n))

    final, n = while_steps(lw, caps + laned, init, out_types[:nc], step, until, max_steps,
                           site, None, record)
    return final + [Scalar(out_types[nc], n)] + tapes.arrays()


def while_steps(lw: Lowerer, consts: list, init: list, types: list[Type], step: Region,
                until: Region, max_steps: int, site: int, lane: ir.Value | None,
                record) -> tuple[list[Value], ir.Value]:
    """The while loop of one iterate (or one lane of it); -> (final carries, steps)."""
    carries = Carries(lw, types)
    nc = len(types)

    def test(regs):
        n, vals = regs[0], carries.values(regs[1:])
        done = lw.scalar(lw.lower_region(until, consts + vals)[0])
        running = lw.b.not_(done)
        lw.fail_if_any(lw.b.and_(running, lw.b.icmp_signed(">=", n, lw.i64(max_steps))),
                       "iterate", site, lane)
        return running

    def body(regs):
        n, vals = regs[0], carries.values(regs[1:])
        outs = lw.lower_region(step, consts + vals)
        record(n, outs[nc:])
        return [lw.b.add(n, lw.i64(1))] + carries.step(regs[1:], outs[:nc])

    final = lw.fn.while_loop([lw.i64(0)] + carries.start(init), test, body)
    return carries.values(final[1:]), final[0]
