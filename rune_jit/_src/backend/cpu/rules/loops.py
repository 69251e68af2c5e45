"""Loops in native code: scan as a counted loop, iterate as a while loop, lanes apart.

Carries live in registers or buffers (carries.py). Rows of xs are read in place; each
y is written straight into its row of the stacked output.

Loops with lanes (a vmapped iterate and the counted scans of its reverse mode)
run their per-lane step one lane at a time here; lane_blocks.py runs blocks of
lanes together in vector registers where the step allows it.
"""

from __future__ import annotations

from ....ir import Region, Type
from ....ops.iterate import iterate_p, named
from ....ops.scan import Layout, scan_p
from ..codegen import arith
from ..codegen.emit import SMALL_BYTES
from ..codegen.carries import Carries, Tapes, row, row_pointer, while_steps
from .lane_loops import lower_counted_scan, lower_laned_iterate
from ..codegen.lower import Lowerer, lowering
from ..codegen.values import Array, Lazy, Scalar


@lowering(scan_p)
def lower_scan(lw: Lowerer, args, out_types, *, step: Region, num_carry, num_laned, length,
               reverse, counted, num_captures):
    lay = Layout(len(args), dict(num_captures=num_captures, counted=counted,
                                 num_laned=num_laned, num_carry=num_carry))
    caps, counts, laned, init, xs = lay.operands(args)
    if counted:
        return lower_counted_scan(lw, caps, counts, laned, init, xs, out_types, step, length,
                                  reverse)
    nc = num_carry
    ys = [lw.out_buffer(nc + i, t) for i, t in enumerate(out_types[nc:])]
    y_rows = [t.with_shape(t.shape[1:]) for t in out_types[nc:]]
    carries = Carries(lw, out_types[:nc], step, len(caps))
    x_rows = [x.type.with_shape(x.type.shape[1:]) for x in xs]
    # computed rows, and those that read no memory (an iota: reverse mode's step index),
    # are computed a block at a time; other rows are read in place
    blocked = [isinstance(x, Lazy) and (x.cost > 0 or x.cheap) for x in xs]
    block = _block_rows(x_rows, blocked, length)
    xs = [x if b else lw.materialize(x) for x, b in zip(xs, blocked)]
    buffers = [lw.buffer(xt.with_shape((block,) + xt.shape)) if b else None
               for xt, b in zip(x_rows, blocked)]

    def body(t, i, regs):  # step t, row i of the block buffers
        lw.poll_interrupt(t, step)
        # read, and stored, where the step uses and makes them (in its parts, if any)
        rows = [(lambda xt=xt, buf=buf: row(lw, Array(xt, buf), xt, i)) if buf is not None
                else (lambda x=x, xt=xt: row(lw, x, xt, t))
                for x, xt, buf in zip(xs, x_rows, buffers)]
        sinks = [None] * nc + [lambda y, base=base, yt=yt: lw.store(y, row_pointer(lw, base, yt, t))
                               for base, yt in zip(ys, y_rows)]
        outs = lw.lower_region(step, caps + carries.values(regs) + rows,
                               carries.dests(step, regs, len(caps)), sinks)
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


@lowering(iterate_p)
def lower_iterate(lw: Lowerer, args, out_types, *, step: Region, until: Region, num_carry,
                  num_laned, max_steps, lanes, shown, together, num_captures):
    k = num_captures
    caps, laned, init = list(args[:k]), list(args[k:k + num_laned]), list(args[k + num_laned:])
    site = lw.errors.add("iterate", max_steps=max_steps, lanes=tuple(lanes),
                         shown=named(shown, together))
    if lanes:
        return lower_laned_iterate(lw, caps, laned, init, out_types, step, until, max_steps,
                                   tuple(lanes), site)
    nc = num_carry
    tapes = Tapes(lw, out_types[nc + 1:], max_steps)
    rows = [t.with_shape(t.shape[1:]) for t in out_types[nc + 1:]]

    def record(n, ys):
        tapes.reserve(lw.b.add(n, lw.i64(1)))
        for y, base, yt in zip(ys, tapes.pointers(), rows):
            lw.store(y, row_pointer(lw, base, yt, n))

    # (an array carry starts where the caller wants it: `donated` in carries.py)
    firsts = [lw.claim(i) if t.nbytes > SMALL_BYTES else None
              for i, t in enumerate(out_types[:nc])]
    final, n = while_steps(lw, caps + laned, init, out_types[:nc], step, until, max_steps,
                           site, None, record, firsts)
    return final + [Scalar(out_types[nc], n)] + tapes.arrays()
