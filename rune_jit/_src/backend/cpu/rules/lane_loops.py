"""Loops with lanes: a vmapped iterate and the counted scans of its reverse mode.

Each lane runs its own loop: a lane that is done costs nothing more, and the
transposed loop of reverse mode runs exactly as many steps as the lane took.
Lanes are flattened into one index; a laned operand is read at its lane's
offset, in place. (lane_blocks.py runs blocks of lanes in vector registers.)
"""

from __future__ import annotations

import math
from typing import Callable

import llvmlite.ir as ir
import numpy as np

from ....ir import Region, Type
from ....ops.loops import observable
from . import lane_blocks
from .lane_compaction import Compaction
from ..runtime import threads
from ..codegen.arith import convert, maximum
from ..codegen.carries import Carries, Tapes, row, row_pointer, while_steps
from ..codegen.lower import Lowerer
from ..codegen.values import Array, Value, row_bytes


# Tapes of a vmapped iterate are grown to max_steps rows before its blocks run on several
# threads, up to this many bytes (address space: rows no step reaches are never touched,
# so never backed); a longer one runs its blocks on the calling thread, growing its tapes.
RESERVED_TAPE_BYTES = 1 << 30
compacting = True  # lanes repacked as they stop (lane_compaction.py); tests turn it off


def per_lane(t: Type, lanes: tuple) -> Type:
    return t.with_shape(t.shape[len(lanes):])


def lane_value(lw: Lowerer, x: Array, lanes: tuple, lane: ir.Value) -> Value:
    """One lane's slice of a laned array."""
    return row(lw, x, per_lane(x.type, lanes), lane)


def by_lanes(lw: Lowerer, caps: list, laned: list[Array], init: list[Array], outs: list,
             lanes: tuple, width: int | None, in_block: Callable, in_lane: Callable,
             parallel: bool) -> None:
    """The frame of a loop with lanes: the full blocks of `width` lanes together in vector
    registers (none if `width` is None), then the other lanes one at a time; on the
    pool's threads if `parallel` (the blocks, else the lanes). Each block or lane starts
    from its slices of `laned` and
    `init`; `in_block(vw, first, consts, carries)` or `in_lane(lane, consts, carries)`
    runs its loop and returns its final carries, which go to its slices of the buffers
    `outs`."""
    n_lanes = math.prod(lanes)
    done = 0
    if width is not None:
        if in_block is not None:  # (else the caller ran the blocks)
            lane_blocks.by_blocks(lw, caps, laned, init, outs, n_lanes, width, in_block,
                                  parallel)
        done = n_lanes // width * width

    def one_lane(lane, _):
        consts = caps + [lane_value(lw, v, lanes, lane) for v in laned]
        final = in_lane(lane, consts, [lane_value(lw, v, lanes, lane) for v in init])
        for v, base, x in zip(final, outs, init):
            lw.store(v, row_pointer(lw, base, per_lane(x.type, lanes), lane))
        return []

    def some_lanes(j):  # the j-th group of lanes, of a parallel region
        group = lw.i64(lane_blocks.LANES_PER_TASK)
        end = maximum(lw.b, lw.b.mul(lw.b.add(j, lw.i64(1)), group), lw.i64(n_lanes), False)
        lw.fn.loop(lw.b.mul(j, group), end, 1, [], one_lane)

    if parallel and width is None:
        threads.parallel_loop(lw, -(-n_lanes // lane_blocks.LANES_PER_TASK), some_lanes)
    else:
        lw.fn.loop(lw.i64(done), lw.i64(n_lanes), 1, [], one_lane)


def lower_laned_iterate(lw: Lowerer, caps: list, laned: list, init: list, out_types,
                        step: Region, until: Region, max_steps: int, lanes: tuple, site: int):
    nc = len(init)
    n_lanes = math.prod(lanes)
    outs = [lw.out_buffer(i, t) for i, t in enumerate(out_types[:nc + 1])]
    tapes = Tapes(lw, out_types[nc + 1:], max_steps)
    per = [per_lane(t, lanes) for t in out_types[:nc]]
    y_rows = [per_lane(t.with_shape(t.shape[1:]), lanes) for t in out_types[nc + 1:]]
    laned, init = [lw.materialize(v) for v in laned], [lw.materialize(v) for v in init]
    width = lane_blocks.block_width([step, until], caps, laned + init)
    donors = observable([step, until])
    parallel = (lane_blocks.in_parallel(lw, [step, until], n_lanes, width)
                and max_steps * sum(map(row_bytes, tapes.types)) <= RESERVED_TAPE_BYTES)
    rows = tapes
    if parallel and tapes.types:  # grown now: blocks on several threads must not grow them
        tapes.reserve(lw.i64(max_steps))
        rows = lane_blocks.Reserved(tapes.pointers())

    def in_block(vw, first, consts, start):
        return lane_blocks.iterate_block(vw, first, consts, len(caps), start, step, until,
                                         rows, outs[:nc], outs[nc], max_steps, n_lanes, site,
                                         donors)

    def in_lane(lane, consts, start):
        def record(n, ys):
            rows.reserve(lw.b.add(n, lw.i64(1)))
            at = lw.b.add(lw.b.mul(n, lw.i64(n_lanes)), lane)
            for y, base, yt in zip(ys, rows.pointers(), y_rows):
                lw.store(y, row_pointer(lw, base, yt, at))

        final, n = while_steps(lw, consts, start, per, step, until, max_steps, site, lane,
                               record)
        lw.store_at(outs[nc], np.dtype(np.int64), lane, n)
        return final

    if width is not None and not tapes.types and compacting:
        Compaction(lw, caps, laned, init, outs, (step, until), max_steps, site, width,
                   n_lanes, donors).run(lw, parallel)
        in_block = None
    by_lanes(lw, caps, laned, init, outs[:nc], lanes, width, in_block, in_lane, parallel)
    return [Array(t, p) for t, p in zip(out_types, outs)] + tapes.arrays()


def lower_counted_scan(lw: Lowerer, caps: list, counts: Value, laned: list, init: list,
                       xs: list, out_types, step: Region, length: int, reverse: bool):
    lanes = counts.type.shape
    nc = len(init)
    n_lanes = math.prod(lanes)
    counts = lw.materialize(counts)
    outs = [lw.out_buffer(i, t) for i, t in enumerate(out_types[:nc])]
    ys = counted_ys(lw, counts, out_types[nc:], nc, length, n_lanes)
    outs += [y.ptr for y in ys]
    per = [per_lane(t, lanes) for t in out_types[:nc]]
    x_rows = [per_lane(x.type.with_shape(x.type.shape[1:]), lanes) for x in xs]
    y_rows = [per_lane(t.with_shape(t.shape[1:]), lanes) for t in out_types[nc:]]
    laned = [lw.materialize(v) for v in laned]
    init, xs = [lw.materialize(v) for v in init], [lw.materialize(x) for x in xs]
    width = lane_blocks.block_width([step], caps, laned + init + xs)
    parallel = lane_blocks.in_parallel(lw, [step], n_lanes, width)

    def in_block(vw, first, consts, start):
        return lane_blocks.counted_scan_block(vw, first, consts, len(caps), start, step,
                                              counts, xs, outs[nc:], length, reverse,
                                              n_lanes, observable([step]))

    def in_lane(lane, consts, start):
        carries = Carries(lw, per, step, len(consts))
        count = lw.load_at(counts.ptr, counts.type.dtype, lane)
        count = maximum(lw.b, convert(lw.b, count, np.dtype(np.int64)), lw.i64(length), False)

        def body(t, regs):
            lw.poll_interrupt(t, step)
            at = lw.b.add(lw.b.mul(t, lw.i64(n_lanes)), lane)
            rows = [row(lw, x, xt, at) for x, xt in zip(xs, x_rows)]
            new = lw.lower_region(step, consts + carries.values(regs) + rows,
                                  carries.dests(step, regs, len(consts)))
            for y, base, yt in zip(new[nc:], outs[nc:], y_rows):
                lw.store(y, row_pointer(lw, base, yt, at))
            return carries.step(regs, new[:nc])

        return carries.values(lw.fn.counted_loop(count, reverse, carries.start(start), body))

    by_lanes(lw, caps, laned, init, outs[:nc], lanes, width, in_block, in_lane, parallel)
    return [Array(t, p) for t, p in zip(out_types[:nc], outs)] + ys


def counted_ys(lw: Lowerer, counts: Array, types: list[Type], first: int, length: int,
               n_lanes: int) -> list[Array]:
    """The ys of a counted scan (its outputs from `first` on), zero past each lane's count
    (they are tangents: read whole). Those of a loop with no step limit hold the rows of
    its longest lane."""
    if not any(t.unsized for t in types):
        ys = [Array(t, lw.out_buffer(first + i, t)) for i, t in enumerate(types)]
        for y in ys:
            lw.fn.memset0(y.ptr, y.type.nbytes)
        return ys
    tapes = Tapes(lw, types, length)
    tapes.reserve(_longest(lw, counts, n_lanes))
    for y in tapes.arrays():
        lw.fn.memset0(y.ptr, lw.b.mul(y.rows, lw.i64(row_bytes(y.type))))
    return tapes.arrays()


def _longest(lw: Lowerer, counts: Array, n_lanes: int) -> ir.Value:
    def body(lane, regs):
        count = lw.load_at(counts.ptr, counts.type.dtype, lane)
        return [maximum(lw.b, regs[0], convert(lw.b, count, np.dtype(np.int64)))]

    return lw.fn.loop(lw.i64(0), lw.i64(n_lanes), 1, [lw.i64(0)], body)[0]
