"""Lane compaction: the blocks of a vmapped iterate (lane_blocks.py) repacked as lanes stop,
so that its time tracks the steps its lanes take, not blocks times their slowest lane.

A first pass runs the blocks of lanes (on the pool's threads, which claim blocks as
plain lane blocks do), as lane_blocks.iterate_block does, except that a block whose
running lanes have been under 1 / RETIRE_UNDER of its width for PATIENCE steps retires
them: their operands, step counts and lane numbers go to the queue, packed in the
block's own segment, and the block is done. The segments are then packed into one
queue, which the next pass runs in full blocks the same way (retiring again while it
holds more than one block), until it is empty. A lane's results go to its own position
whichever block it ends in. With donors (the step is `observable`), a lane's carry is
stored when it stops and it computes its donor's step; else it holds its carry, and the
block stores its lanes when it is done.

Running out of steps is recorded (the least lane that did) rather than raised at once:
a lane retired earlier may be a lower one that runs out later: the call raises for the
least when no lane runs. Only the forward loop is compacted: a loop that keeps tapes
(reverse mode's) runs in plain blocks.
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
PATIENCE = 8  # steps a block runs few lanes before it retires them (>= 1): W4's lanes,
# which stop a few steps apart, are not worth moving
NONE = 1 << 62  # no lane ran out of steps
COUNT = Type(INT64, ())


class Compaction:
    """What the passes of one compacted iterate share: its regions, operands, outputs, the
    queue (one array per operand, step count and lane number, of n lanes; block j of a
    pass retires its lanes to its own segment, j * width on) and, per block of a pass,
    the lanes it retired and the least lane it found out of steps."""

    def __init__(self, lw: Lowerer, caps: list, laned: list[Array], init: list[Array],
                 outs: list, regions: tuple[Region, Region], max_steps: int, site: int,
                 width: int, n_lanes: int, donors: bool):
        self.caps, self.laned, self.init, self.outs = caps, laned, init, outs
        self.donors = donors  # (lane_blocks.observable: else stopped lanes hold their carry)
        self.step, self.until = regions
        self.max_steps, self.site, self.width = max_steps, site, width
        self.types = [v.type.with_shape(()) for v in laned + init]
        self.full = n_lanes // width * width
        self.queue = [lw.buffer(Type(t.dtype, (self.full,)))
                      for t in self.types + [COUNT] * 2]
        self.retired, self.bad = (lw.buffer(Type(INT64, (self.full // width,)))
                                  for _ in range(2))

    def run(self, lw: Lowerer, parallel: bool) -> None:
        b = lw.b
        blocks = lw.i64(self.full // self.width)
        self.each(lw, parallel, blocks, self.first_block)

        def queue_pass(regs):
            q, bad = regs
            blocks = b.sdiv(b.add(q, lw.i64(self.width - 1)), lw.i64(self.width))
            self.each(lw, parallel, blocks, lambda vw, j: self.queue_block(vw, j, q))
            q, worse = self.pack(lw, blocks)
            return [q, arith.maximum(b, bad, worse, False)]

        bad = lw.fn.while_loop(self.pack(lw, blocks), lambda r: b.icmp_signed(
            ">", r[0], lw.i64(0)), queue_pass)[1]
        lw.fail_if_any(b.icmp_signed("<", bad, lw.i64(NONE)), "iterate", self.site, bad)

    def each(self, lw: Lowerer, parallel: bool, blocks: ir.Value, block) -> None:
        """`block(vw, j)` for each j < `blocks`, on the pool's threads if `parallel`; each
        block's lanes retired and least lane out of steps to `retired` and `bad`."""
        def one(j):
            vw = lw.with_width(self.width)
            w, bad = block(vw, j)
            vw.store_at(self.retired, INT64, j, w)
            vw.store_at(self.bad, INT64, j, bad)

        if parallel:
            threads.parallel_loop(lw, blocks, one)
        else:
            lw.fn.loop(lw.i64(0), blocks, 1, [], lambda j, _: one(j) or [])

    def pack(self, lw: Lowerer, blocks: ir.Value) -> list:
        """The blocks' retired lanes moved to the queue's start, in order: -> (their
        number, the least lane out of steps)."""
        b, width = lw.b, self.width

        def block(j, regs):
            q, bad = regs
            n = lw.load_at(self.retired, INT64, j)
            at = b.mul(j, lw.i64(width))

            def move(k, _):  # (k + q <= k + at: ascending, no lane is overwritten unread)
                for p, t in zip(self.queue, self.types + [COUNT] * 2):
                    lw.store_at(p, t.dtype, b.add(q, k), lw.load_at(p, t.dtype, b.add(at, k)))
                return []

            lw.fn.loop(lw.i64(0), n, 1, [], move)
            least = lw.load_at(self.bad, INT64, j)
            return [b.add(q, n), arith.maximum(b, bad, least, False)]

        return lw.fn.loop(lw.i64(0), blocks, 1, [lw.i64(0), lw.i64(NONE)], block)

    # ------------------------------------------------------------- blocks

    def first_block(self, vw: Lowerer, j: ir.Value) -> list:
        """Block j of the lanes, from the operands: -> (lanes retired, least lane out of
        steps)."""
        b, nl = vw.b, len(self.laned)
        first = b.mul(j, vw.i64(self.width))
        ops = [load_block(vw, v, first).v for v in self.laned + self.init]
        if self.donors:  # (else stored with the lanes that stop in the block)
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

        ops = donated(vw, mask, ops) if self.donors else ops  # (else stored from ops)
        return self.block(vw, first, mask, vw.const(INT64, 0), ids, ops, gone, ir.Constant(emit.I1, 1), vw.i64(0), vw.i64(NONE),
                          vw.const(np.dtype(bool), True))

    def queue_block(self, vw: Lowerer, j: ir.Value, q: ir.Value) -> list:
        """Block j of the queue's q lanes, retiring (to its own segment, read already)
        while the queue fills more than one block: -> (lanes retired, least lane out of
        steps)."""
        b, width = vw.b, self.width
        at = b.mul(j, vw.i64(width))
        ops = [vw.load_at(p, t.dtype, at, width) for p, t in zip(self.queue, self.types)]
        steps, ids = (vw.load_at(p, INT64, at, width) for p in self.queue[-2:])
        valid = b.icmp_signed("<", _iota(vw), vw.splat(b.sub(q, at)))
        return self.block(vw, at, valid, steps, ids, donated(vw, valid, ops),
                          lambda m, o, s, i: self.scatter(vw, m, o, s, i),
                          b.icmp_signed(">", q, vw.i64(width)), vw.i64(0), vw.i64(NONE),
                          valid)

    def block(self, vw: Lowerer, lo, mask, steps, ids, ops, gone, may_retire, w, bad, ended):
        """Run a block of lanes (those on `mask` running) until none runs or it retires
        its lanes; `gone(mask, ops, steps, ids)` stores the lanes on mask: with donors,
        those that stop as they do; else, when the block is done, those of `ended` it did
        not retire. -> (queue length, least lane out of steps)."""
        b = vw.b
        # no lane can run out of steps before step `safe` of the block: a scalar test
        safe = b.sub(vw.i64(self.max_steps), _reduce(vw, "smax", b.select(
            mask, steps, vw.const(INT64, 0)), emit.I64))

        def out_of_steps(mask, steps, bad):
            stuck = b.and_(mask, b.icmp_signed(">=", steps, vw.const(INT64, self.max_steps)))
            bad = arith.maximum(b, bad, _reduce(vw, "smin", b.select(
                stuck, ids, vw.const(INT64, NONE)), emit.I64), False)
            return [b.and_(mask, b.not_(stuck)), bad]

        def body(regs):
            n, mask, steps, w, bad, ended, lonely, ops = *regs[:7], regs[7:]
            mask, bad = vw.fn.if_else(b.icmp_signed(">=", n, safe), lambda: out_of_steps(
                mask, steps, bad), lambda: [mask, bad])
            # steps on a straight path until the block must act (a lane stops, with donors;
            # few run, else): the stops' work stays out of it
            run = vw.fn.while_loop(
                [n, mask, mask, ir.Constant(emit.I1, 1), steps, lonely] + ops, lambda r: r[3],
                lambda r: self.steps(vw, safe, may_retire, *r))
            n, now, was, steps, lonely, ops = *run[:3], run[4], run[5], run[6:]
            out = self.stopped(vw, lo, was, now, ops, steps, ids, w, gone,
                               self.due(vw, may_retire, lonely), ended)
            return [n, out[0], steps, out[1], bad, out[2], lonely] + out[3:]

        regs = [vw.i64(0), mask, steps, w, bad, ended, vw.i64(0)] + ops
        final = vw.fn.while_loop(regs, lambda r: _reduce(vw, "or", r[1], emit.I1), body)
        if not self.donors:
            gone(final[5], final[7:], final[2], ids)
        return [final[3], final[4]]

    def steps(self, vw: Lowerer, safe, may_retire, n, mask, _was, _go, steps, lonely, *ops
              ) -> list:
        """One step of a block: -> [n + 1, its lanes still running, `mask`, whether to
        step on, steps taken, steps taken with few lanes running, operands...]. It steps
        on while some lane runs (with donors, while none stopped), none may run out of
        steps and the block is not `due` to retire them."""
        b, nl = vw.b, len(self.laned)
        vw.poll_interrupt(n, self.step)
        vw.running = mask
        new = vw.lower_region(self.step, self.caps + self._values(ops))
        vw.running = None
        new = list(ops[:nl]) + [vw.scalar(x) if self.donors else b.select(mask, vw.scalar(x), c)
                                for x, c in zip(new[:len(self.init)], ops[nl:])]
        now = b.and_(mask, self.running(vw, new))
        n = b.add(n, vw.i64(1))
        lonely = b.select(self.few(vw, now), b.add(lonely, vw.i64(1)), vw.i64(0))
        if self.donors:  # (a stop gives the stopped lanes donors)
            go = b.icmp_unsigned("==", _bits(vw, now), _bits(vw, mask))
        else:
            go = _reduce(vw, "or", now, emit.I1)
        go = b.and_(b.and_(go, b.not_(self.due(vw, may_retire, lonely))),
                    b.icmp_signed("<", n, safe))
        return [n, now, mask, go, b.add(steps, b.zext(mask, steps.type)), lonely] + new

    def due(self, vw: Lowerer, may_retire, lonely) -> ir.Value:
        """Whether a block retires its lanes: few have run for PATIENCE steps."""
        return vw.b.and_(may_retire, vw.b.icmp_signed(">=", lonely, vw.i64(PATIENCE)))

    def few(self, vw: Lowerer, mask) -> ir.Value:
        """Whether under 1 / RETIRE_UNDER of the block's lanes are on `mask`."""
        count = arith.intrinsic(vw.b, "ctpop", _bits(vw, mask))
        return vw.b.icmp_unsigned("<", vw.b.zext(count, emit.I64) if self.width < 64
                                  else count, vw.i64(self.width // RETIRE_UNDER))

    def stopped(self, vw: Lowerer, lo, was, now, ops, steps, ids, w, gone, retire, ended):
        """The block acts after its steps from `was` to `now`: with donors, stores the
        lanes that stopped; retires the running ones if they are few (-> no lane runs;
        they leave `ended`), else, with donors, gives the stopped ones their donor's
        operands. -> [mask, queue length, ended, operands...]."""
        b = vw.b
        if self.donors:
            changed = b.icmp_unsigned("!=", _bits(vw, now), _bits(vw, was))
            vw.fn.if_else(changed, lambda: gone(b.and_(was, b.not_(now)), ops, steps, ids)
                          or [], lambda: [])
        none = vw.const(np.dtype(bool), False)
        return vw.fn.if_else(
            retire, lambda: [none, self.retire(vw, lo, now, ops, steps, ids, w),
                             b.and_(ended, b.not_(now))] + ops,
            lambda: [now, w, ended] + (donated(vw, now, ops) if self.donors else ops))

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
