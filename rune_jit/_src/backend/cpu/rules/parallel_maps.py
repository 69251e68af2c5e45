"""Large elementwise maps, reductions and scatters, on the pool's threads (threads.py),
in a loop's step as outside loops (a region a step: the workers poll for the next one).

A lazy value that is stored (fused elementwise operations, broadcasts, gathers: one
loop nest), or a reduction of the last axes (one accumulator per output element,
reduce.py), is split into blocks of rows along its first axis, which the pool's
threads take in turn. Each element is computed by the same code as on one thread,
and where the loop over rows may be the one LLVM vectorizes, a block starts at a
multiple of BLOCK_ALIGN rows, so that the vector loop covers the same elements and its
scalar remainder the same last ones (a math function's vector and scalar variants may
round differently): the results are bit-identical to one thread's.

A large reduction to a scalar is split the same way, into blocks of rows fixed by its
shape and work alone, each folded to a partial result; the partials are then combined
in order on the calling thread. The split does not depend on the number of threads,
nor on whether there are any (one thread folds the same blocks in turn), so neither
does the rounding. Reductions of leading axes (whose output is the accumulator) stay
on the calling thread.

A large accumulating scatter (add, multiply, min, max) whose updates outnumber its
output's elements is split the same way, into parts fixed by its shape (scatter_parts):
the first part accumulates into the output, each other part into a copy of it that
starts at the operation's identity, and the copies are then combined into the output in
order. "set" is not split: of repeated positions the last write must win.
"""

from __future__ import annotations

import math
from typing import Callable

import llvmlite.ir as ir
import numpy as np

from ....ir import Type
from ..runtime import threads
from ..codegen.lower import SMALL_ELEMENTS, STORES, Lowerer
from ..codegen.values import Lazy

BLOCK_WORK = 1 << 15  # operations a block (about): some microseconds of work
BLOCK_ALIGN = 1024  # a multiple of every vector loop's elements a step (VF x interleave)
# Elements times operations per element below which a map stays on the calling thread
# (a region's start costs some microseconds: about 10^5 fused operations).
MAP_WORK = 1 << 18
# The same in a loop's step, where the workers still poll for work from the last step's
# region: measured, a map of 3 * 2^15 operations a step runs 1.4 times faster on two
# threads, one of 3 * 2^14 no faster.
STEP_MAP_WORK = 1 << 16
PART_UPDATES = 4  # a scatter's updates an output element, at least, to split it in parts
MAX_PARTS = 16


def _rows_per_block(shape: tuple, work: int, loop_free: bool) -> int:
    """Rows (indices of the first axis) a block: about BLOCK_WORK operations; a multiple
    of BLOCK_ALIGN when a row's code may have no loop once LLVM unrolls short ones (its
    elements are loop-free, and few), so that the loop over rows may be the one LLVM
    vectorizes."""
    rows = -(-BLOCK_WORK // max(1, work // shape[0]))
    if loop_free and math.prod(shape[1:]) < BLOCK_ALIGN:
        return -(-rows // BLOCK_ALIGN) * BLOCK_ALIGN
    return rows


def spans(n: int, count: int, align: int = 1) -> tuple[int, int]:
    """(span, parts): `n` split in at most `count` parts of `span` (a multiple of
    `align`), the last one shorter when they do not divide it."""
    share = -(-n // max(count, 1))
    span = -(-share // align) * align
    return span, -(-n // span)


def block_rows(lw: Lowerer, j: ir.Value, rows: int, n: int) -> tuple[ir.Value, ir.Value]:
    """The first and one-past-last row of block j of `rows` rows, of n in all."""
    start = lw.b.mul(j, lw.i64(rows))
    stop = lw.b.add(start, lw.i64(rows))
    return start, lw.b.select(lw.b.icmp_signed("<", stop, lw.i64(n)), stop, lw.i64(n))


def elements_in_parallel(lw: Lowerer, shape: tuple, work: int,
                         body: Callable[[list[ir.Value]], None], loop_free: bool = True,
                         parallel: bool = False) -> bool:
    """body(idx) for every index of `shape` (each independent of the others, `work`
    operations in all; `loop_free`: whether an element's code may have no loop), in
    blocks of rows on the pool's threads, if it is worth it; -> whether it was (else
    nothing was emitted). `parallel`: the loops are, in LLVM's sense too
    (emit.Fn.while_loop)."""
    least = STEP_MAP_WORK if lw.fn.loops else MAP_WORK
    if not threads.may_start(lw, in_loops=True) or not shape or work < least:
        return False
    rows = _rows_per_block(shape, work, loop_free)
    n_blocks = -(-shape[0] // rows)
    if n_blocks < 2:
        return False

    def block(j: ir.Value) -> None:
        start, stop = block_rows(lw, j, rows, shape[0])
        lw.fn.loop(start, stop, 1, [], lambda r, _: lw.loop_nest(
            shape[1:], lambda idx: body([r] + idx), parallel) or [], parallel)

    threads.parallel_loop(lw, n_blocks, block)
    return True


def in_blocks(lw: Lowerer, n_blocks: int, block: Callable[[ir.Value], None]) -> None:
    """block(j) for j in range(n_blocks): on the pool's threads where a region may start
    (in a loop's step too: the caller's work is worth a region), else in turn."""
    if threads.may_start(lw, in_loops=True):
        threads.parallel_loop(lw, n_blocks, block)
    else:
        lw.fn.loop(lw.i64(0), lw.i64(n_blocks), 1, [], lambda j, _: block(j) or [])


def scatter_parts(updates: tuple, out_size: int, work: int) -> int:
    """Parts an accumulating scatter of `updates` rows into `out_size` elements (`work`
    operations) is split into, each accumulating into its own copy of the output (1: not
    split). Fixed by shape and work alone, not by the threads, so that its rounding does
    not depend on them; only where the updates outnumber the output's elements
    PART_UPDATES times, so that combining the copies costs little next to the updates."""
    if not updates or work < MAP_WORK:
        return 1
    by_size = math.prod(updates) // (PART_UPDATES * max(out_size, 1))
    return max(1, min(MAX_PARTS, updates[0], by_size))


def fold_in_blocks(lw: Lowerer, shape: tuple, work: int, acc_dtype: np.dtype,
                   init: ir.Value, combine: Callable[[ir.Value, ir.Value], ir.Value],
                   element: Callable[[list[ir.Value]], ir.Value]) -> ir.Value | None:
    """The fold of `combine` over element(idx) for every index of `shape` (`work`
    operations in all), in fixed blocks of rows whose partials combine in order, the
    blocks on the pool's threads where it may start a region; -> the result, or None
    (nothing emitted) when the fold is too small to split."""
    if not shape or work < MAP_WORK:
        return None
    rows = _rows_per_block(shape, work, math.prod(shape[1:]) <= SMALL_ELEMENTS)
    n_blocks = -(-shape[0] // rows)
    if n_blocks < 2:
        return None
    partials = lw.buffer(Type(acc_dtype, (n_blocks,)))

    def block(j: ir.Value) -> None:
        start, stop = block_rows(lw, j, rows, shape[0])
        (acc,) = lw.fn.loop(start, stop, 1, [init], lambda r, acc: lw.fold(
            shape[1:], acc, lambda idx, a: [combine(a[0], element([r] + idx))]))
        lw.store_at(partials, acc_dtype, j, acc)

    in_blocks(lw, n_blocks, block)
    (total,) = lw.fn.loop(lw.i64(0), lw.i64(n_blocks), 1, [init], lambda j, acc: [
        combine(acc[0], lw.load_at(partials, acc_dtype, j))])
    return total


def _store_in_parallel(lw: Lowerer, v: Lazy, dest: ir.Value) -> bool:
    t = v.type
    return elements_in_parallel(
        lw, t.shape, t.size * max(v.cost, 1),
        lambda idx: lw.store_element(v, dest, idx), parallel=True)


STORES.append(_store_in_parallel)
