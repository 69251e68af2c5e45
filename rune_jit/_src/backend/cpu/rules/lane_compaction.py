"""Lane compaction: the blocks of a vmapped iterate (lane_blocks.py) repacked as lanes stop,
so that its time tracks the steps its lanes take, not blocks times their slowest lane.

Lanes go in tasks of TASK_BLOCKS blocks (the pool's threads take tasks). A task first
runs its blocks in order, as lane_blocks.iterate_block does (a lane's carry is stored
when it stops, and a stopped lane computes its donor's step), except that a block whose
running lanes fall under 1 / RETIRE_UNDER of its width retires them: their operands, step
counts and lane numbers go to the task's queue, packed, and the block is done. Then the
task runs the queue in full blocks the same way (retiring again while the queue holds
more than one block), until it is empty; its last block runs to the end. A lane's
results go to its own position whichever block it ends in.

Running out of steps is recorded (the least lane that did) rather than raised at once:
a lane retired earlier may be a lower one that runs out later; the task raises for the
least when it is done, and the pool raises the first failing task's. Only the forward
loop is compacted: a loop that keeps tapes (reverse mode's) runs in plain blocks.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ....ir import Region, Type
from ..codegen import arith, emit
from ..codegen.lower import Lowerer
from ..codegen.values import Array, Scalar
from ..runtime import threads
from .lane_blocks import INT64, _bits, _reduce, donated, load_block

RETIRE_UNDER = 4  # 2 and 4 measured alike on bench row HT (heavy tail), 8 2.5x slower
TASK_BLOCKS = 256  # blocks of lanes a task (and its queue) holds
NONE = 1 << 62  # no lane ran out of steps
COUNT = Type(INT64, ())


class Compaction:
    """What the tasks of one compacted iterate share: its regions, operands, outputs and
    the queue (one array per operand, step count and lane number, of n lanes)."""

    def __init__(self, lw: Lowerer, caps: list, laned: list[Array], init: list[Array],
                 outs: list, regions: tuple[Region, Region], max_steps: int, site: int,
                 width: int, n_lanes: int):
        self.caps, self.laned, self.init, self.outs = caps, laned, init, outs
        self.step, self.until = regions
        self.max_steps, self.site, self.width = max_steps, site, width
        self.types = [v.type.with_shape(()) for v in laned + init]
        self.full = n_lanes // width * width
        self.queue = [lw.buffer(Type(t.dtype, (self.full,)))
                      for t in self.types + [COUNT] * 2]

    def run(self, lw: Lowerer, parallel: bool) -> None:
        per = self.width * TASK_BLOCKS
        tasks = -(-self.full // per)
        if parallel:
            threads.parallel_loop(lw, tasks, lambda j: self.task(lw, j))
        else:
            lw.fn.loop(lw.i64(0), lw.i64(tasks), 1, [], lambda j, _: self.task(lw, j) or [])

    def task(self, lw: Lowerer, j: ir.Value) -> None:
        vw = lw.with_width(self.width)
        b, per = vw.b, self.width * TASK_BLOCKS
        lo = b.mul(j, vw.i64(per))
        hi = arith.maximum(b, b.add(lo, vw.i64(per)), vw.i64(self.full), False)

        def first_block(j, regs):
            return self.first_block(vw, lo, b.add(lo, b.mul(j, vw.i64(self.width))), *regs)

        blocks = b.sdiv(b.sub(hi, lo), vw.i64(self.width))
        q, bad = vw.fn.loop(vw.i64(0), blocks, 1, [vw.i64(0), vw.i64(NONE)], first_block)
        bad = vw.fn.while_loop([q, bad], lambda r: b.icmp_signed(">", r[0], vw.i64(0)),
                               lambda r: self.queue_pass(vw, lo, *r))[1]
        vw.fail_if_any(b.icmp_signed("<", bad, vw.i64(NONE)), "iterate", self.site, bad)

    # ------------------------------------------------------------- blocks

    def first_block(self, vw: Lowerer, lo, first, w, bad) -> list:
        """Block `first` of the lanes, from the operands: -> (queue length, least lane out
        of steps)."""
        b, nl = vw.b, len(self.laned)
        ops = [load_block(vw, v, first).v for v in self.laned + self.init]
        for c, base, t in zip(ops[nl:], self.outs, self.types[nl:]):  # lanes that take
            vw.store_at(base, t.dtype, first, c)  # no step
        vw.store_at(self.outs[-1], INT64, first, vw.const(INT64, 0))
        mask = self.running(vw, ops)
        ids = b.add(vw.splat(first), _iota(vw))

        def gone(mask, ops, steps, ids):
            for c, base, t in zip(ops[nl:], self.outs, self.types[nl:]):
                kept = vw.load_at(base, t.dtype, first, vw.width)
                vw.store_at(base, t.dtype, first, b.select(mask, c, kept))
            kept = vw.load_at(self.outs[-1], INT64, first, vw.width)
            vw.store_at(self.outs[-1], INT64, first, b.select(mask, steps, kept))

        return self.block(vw, lo, mask, vw.const(INT64, 0), ids,
                          donated(vw, mask, ops), gone, ir.Constant(emit.I1, 1), w, bad)

    def queue_pass(self, vw: Lowerer, lo, q, bad) -> list:
        """The queue's q lanes in blocks, retiring again while they fill more than one:
        -> (the queue's new length, least lane out of steps)."""
        b, width = vw.b, self.width
        may_retire = b.icmp_signed(">", q, vw.i64(width))

        def one(r, regs):
            at = b.add(lo, r)
            ops = [vw.load_at(p, t.dtype, at, width) for p, t in zip(self.queue, self.types)]
            steps, ids = (vw.load_at(p, INT64, at, width) for p in self.queue[-2:])
            valid = b.icmp_signed("<", _iota(vw), vw.splat(b.sub(q, r)))
            return self.block(vw, lo, valid, steps, ids, donated(vw, valid, ops),
                              lambda m, o, s, i: self.scatter(vw, m, o, s, i),
                              may_retire, *regs)

        return vw.fn.loop(vw.i64(0), q, width, [vw.i64(0), bad], one)

    def block(self, vw: Lowerer, lo, mask, steps, ids, ops, gone, may_retire, w, bad):
        """Run a block of lanes (those on `mask` running) until none runs or it retires
        its lanes; `gone(mask, ops, steps, ids)` stores the lanes on mask, which stopped.
        -> (queue length, least lane out of steps)."""
        b, nl = vw.b, len(self.laned)

        def body(regs):
            n, mask, steps, ids, w, bad, ops = *regs[:6], regs[6:]
            vw.poll_interrupt(n, self.step)
            stuck = b.and_(mask, b.icmp_signed(">=", steps, vw.const(INT64, self.max_steps)))
            bad = arith.maximum(b, bad, _reduce(vw, "smin", b.select(
                stuck, ids, vw.const(INT64, NONE)), emit.I64), False)
            mask = b.and_(mask, b.not_(stuck))
            vw.running = mask
            new = vw.lower_region(self.step, self.caps + self._values(ops))
            vw.running = None
            new = ops[:nl] + [vw.scalar(x) for x in new[:len(self.init)]]
            steps = b.add(steps, b.zext(mask, steps.type))
            now = b.and_(mask, self.running(vw, new))
            changed = b.icmp_unsigned("!=", _bits(vw, now), _bits(vw, mask))
            out = vw.fn.if_else(changed, lambda: self.stopped(
                vw, lo, mask, now, new, steps, ids, w, gone, may_retire), lambda: [now, w] + new)
            return [b.add(n, vw.i64(1)), out[0], steps, ids, out[1], bad] + out[2:]

        regs = [vw.i64(0), mask, steps, ids, w, bad] + ops
        final = vw.fn.while_loop(regs, lambda r: _reduce(vw, "or", r[1], emit.I1), body)
        return [final[4], final[5]]

    def stopped(self, vw: Lowerer, lo, mask, now, ops, steps, ids, w, gone, may_retire):
        """Lanes on `mask` and off `now` stopped: store them; retire the running ones if
        they are few (-> no lane runs), else give the stopped ones their donor's operands.
        -> [mask, queue length, operands...]."""
        b = vw.b
        gone(b.and_(mask, b.not_(now)), ops, steps, ids)
        count = arith.intrinsic(b, "ctpop", _bits(vw, now))
        few = b.icmp_unsigned("<", b.zext(count, emit.I64) if self.width < 64 else count,
                              vw.i64(self.width // RETIRE_UNDER))
        retire = b.and_(may_retire, few)
        none = vw.const(np.dtype(bool), False)
        return vw.fn.if_else(
            retire, lambda: [none, self.retire(vw, lo, now, ops, steps, ids, w)] + ops,
            lambda: [now, w] + donated(vw, now, ops))

    def retire(self, vw: Lowerer, lo, mask, ops, steps, ids, w) -> ir.Value:
        """The lanes on `mask` to the queue from `w`: -> its new length."""
        def put(i, regs):
            at = vw.b.add(lo, regs[0])
            for v, p, t in zip(ops + [steps, ids], self.queue, self.types + [COUNT] * 2):
                vw.store_at(p, t.dtype, at, vw.b.extract_element(v, i))
            return [vw.b.add(regs[0], vw.i64(1))]

        return _each_lane(vw, mask, [w], put)[0]

    def scatter(self, vw: Lowerer, mask, ops, steps, ids) -> None:
        """The carries and step counts of the lanes on `mask` to their lanes' outputs."""
        nl = len(self.laned)

        def put(i, regs):
            lane = vw.b.extract_element(ids, i)
            for c, base, t in zip(ops[nl:], self.outs, self.types[nl:]):
                vw.store_at(base, t.dtype, lane, vw.b.extract_element(c, i))
            vw.store_at(self.outs[-1], INT64, lane, vw.b.extract_element(steps, i))
            return []

        _each_lane(vw, mask, [], put)

    # ------------------------------------------------------------- regions

    def _values(self, ops: list) -> list:
        return [Scalar(t, r) for t, r in zip(self.types, ops)]

    def running(self, vw: Lowerer, ops: list) -> ir.Value:
        out = vw.lower_region(self.until, self.caps + self._values(ops))[0]
        return vw.b.not_(vw.scalar(out))


def _iota(vw: Lowerer) -> ir.Value:
    return ir.Constant(ir.VectorType(emit.I64, vw.width), list(range(vw.width)))


def _each_lane(vw: Lowerer, mask: ir.Value, carried: list, fn) -> list:
    """`carried = fn(i, carried)` for each lane i on `mask`, in order."""
    b = vw.b
    bits = b.zext(_bits(vw, mask), emit.I64) if mask.type.count < 64 else _bits(vw, mask)

    def body(regs):
        i = arith.intrinsic(b, "cttz", regs[0], ir.Constant(emit.I1, 0))
        out = fn(i, regs[1:])
        return [b.and_(regs[0], b.sub(regs[0], vw.i64(1)))] + list(out)

    return vw.fn.while_loop([bits] + carried, lambda r: b.icmp_unsigned(
        "!=", r[0], vw.i64(0)), body)[1:]
