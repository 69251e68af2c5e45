"""Large elementwise maps outside loops, stored on the pool's threads (threads.py).

A lazy value that is stored (fused elementwise operations, broadcasts, gathers: one
loop nest) is split into blocks of rows along its first axis, which the pool's
threads take in turn. Each element is computed by the same code as on one thread,
and a block starts at a multiple of BLOCK_ALIGN elements of a row loop, so that LLVM's
vectorized loop covers the same elements and its scalar remainder the same last ones
(a math function's vector and scalar variants may round differently): the results
are bit-identical to one thread's. Reductions stay on the calling thread.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from . import threads
from .lower import STORES, Lowerer
from .values import Lazy

BLOCK_ELEMENTS = 1 << 14  # elements a block (about): 128 KB of float64, in L2
BLOCK_ALIGN = 1024  # a multiple of every vector loop's elements a step (VF x interleave)
# Elements times operations per element below which a map stays on the calling thread
# (a region's start costs some microseconds: about 10^5 fused operations).
MAP_WORK = 1 << 18


def _rows_per_block(shape: tuple) -> int:
    row = max(1, math.prod(shape[1:]))
    if row >= BLOCK_ELEMENTS:
        return 1
    return -(-BLOCK_ELEMENTS // (row * BLOCK_ALIGN)) * BLOCK_ALIGN


def store_in_parallel(lw: Lowerer, v: Lazy, dest: ir.Value) -> bool:
    """Store `v` at `dest` in blocks of rows on the pool's threads, if it is worth it."""
    t = v.type
    if not threads.in_use() or t.ndim == 0 or t.size * max(v.cost, 1) < MAP_WORK:
        return False
    rows = _rows_per_block(t.shape)
    n_blocks = -(-t.shape[0] // rows)
    if n_blocks < 2:
        return False

    def block(j: ir.Value) -> None:
        start = lw.b.mul(j, lw.i64(rows))
        stop = lw.b.add(start, lw.i64(rows))
        stop = lw.b.select(lw.b.icmp_signed("<", stop, lw.i64(t.shape[0])), stop,
                           lw.i64(t.shape[0]))

        def row(r, _):
            lw.fold(t.shape[1:], [], lambda idx, _: lw.store_at(
                dest, t.dtype, lw.offset(t.shape, [r] + idx), lw.load(v, [r] + idx)) or [],
                small=0)
            return []
        lw.fn.loop(start, stop, 1, [], row)

    threads.parallel_loop(lw, n_blocks, block)
    return True


STORES.append(store_in_parallel)
