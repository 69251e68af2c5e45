"""A pool of native threads for compiled code: `parallel_for(body, ctx, n_blocks)`.

Compiled programs call `rune.parallel_for` for work in independent blocks (the lane
blocks of a vmapped iterate, lane_blocks.py; the rows of a large map,
parallel_maps.py), with the block loop outlined as `i64 body(ptr ctx, i64 first,
i64 end, ptr null)` (outline.py: `parallel_loop` here). The pool is a small module of
native code (pool_code.py), compiled once per process (and cached on disk like
programs), so that idle workers sleep on a condition variable without the GIL and a
region starts in microseconds (in well under one when the workers are still polling
for work after the last region: the steps of a loop):

- the workers (RUNE_JIT_NUM_THREADS - 1 of them: the caller works too) are started by
  the first region, with pthread_create from native code, and block every signal
  (Ctrl-C reaches Python's thread; the blocks poll its count, interrupt.py);
- every thread of a region, the caller included, takes the next blocks from one atomic
  counter until none is left, a quarter of its share of those left at a time, down to
  one block (pool_code.CLAIMS): a slow block holds up one thread for a few blocks only;
  the caller then waits for the blocks still running, not for workers that have not
  woken yet (on a busy host a worker may wake late: it then finds the region closed);
- a claim of blocks that fails records its status if its first block is the lowest
  failing claim so far (its blocks run in order and stop at the first that fails), and
  no thread starts a claim past it: the region returns the status of the first failing
  block, which is the one a serial run returns (each block's lanes in order);
- a region entered while another runs (a second Python thread's call, or a region
  inside a region's block) runs inline on its caller: no deadlock, no oversubscription.

After os.fork the child has no workers: its pool is reset, and its first region starts
them again. `limit(n)` makes at most n threads take part (1: every region inline).
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator

import llvmlite.ir as ir

from .... import config
from ....call import disk_cache
from ....call.forks import renew_in_child
from . import llvm, pool_code
from ..codegen.emit import I64, PTR, declare
from ..codegen.lower import Lowerer
from ..codegen.outline import outline
from .pool_code import EXPORTED, SYMBOL



def in_use() -> bool:
    """Whether compiled code may run on more threads than the caller's."""
    return config.num_threads > 1


def may_start(lw: Lowerer, in_loops: bool = False) -> bool:
    """Whether code `lw` emits now may be a parallel region: there are threads, and it is
    not inside a loop unless `in_loops` (work large enough to pay a region's start each
    step; inside a region's blocks a region runs inline anyway)."""
    return in_use() and (in_loops or lw.fn.loops == 0)


def parallel_loop(lw: Lowerer, n_blocks: int | ir.Value, block: Callable[[ir.Value], None]
                  ) -> None:
    """`block(j)` for j in range(n_blocks) (known when the code runs, or before), emitting
    through `lw`, on the pool's threads:
    the blocks become an outlined function (outline.py) that the pool runs; the status
    of the first failing block is the program's."""
    def body(first: ir.Value, end: ir.Value) -> None:
        lw.fn.loop(first, end, 1, [], lambda j, _: block(j) or [])

    out = outline(lw, lw.fn.module.get_unique_name("rune.blocks"), body)
    run = declare(lw.fn.module, SYMBOL, I64, [PTR, PTR, I64])
    n = n_blocks if isinstance(n_blocks, ir.Value) else lw.i64(n_blocks)
    status = lw.b.call(run, [out.function, out.ctx, n])
    lw.fn.fail(lw.b.icmp_unsigned("!=", status, lw.i64(0)), status)


class _Pool:
    """The loaded pool: its code (kept mapped while the process lives) and its state."""

    def __init__(self):
        # not keyed by its IR (building it costs 20 ms): the key covers rune_jit's source
        arch = llvm.target_arch()
        key = disk_cache.key(f"rune_jit thread pool for {arch}", llvm.fingerprint())
        entry = llvm.cached_code(key)
        obj = entry.payload if entry is not None else None
        if obj is None:
            # not optimized: it waits, locks and counts; the blocks are the work
            obj = llvm.emit_object(llvm.parsed(pool_code.module_ir(arch)))
            llvm.cache_code(key, {"pool": True}, obj)
        names = [SYMBOL, "rune.pool_reset"] + [f"rune.pool.{n}" for n in EXPORTED]
        self.image, (self.parallel_for, reset, *fields) = llvm.link(obj, names)
        self.reset = ctypes.CFUNCTYPE(None, ctypes.c_int64)(reset)
        self.fields = {n: ctypes.c_int64.from_address(a) for n, a in zip(EXPORTED, fields)}
        self.reset(config.num_threads - 1)


_pools: list[_Pool] = []  # the one pool of this process, once made
_lock = renew_in_child(sys.modules[__name__], "_lock")


def pool() -> _Pool:
    """The pool of this process (its code compiled or loaded on first use)."""
    if not _pools:
        with _lock:  # two threads' first programs make one pool
            if not _pools:
                _pools.append(_Pool())
    return _pools[0]


def imports() -> dict[str, int]:
    """The pool's entry point, under the name compiled code calls it by."""
    return {SYMBOL: pool().parallel_for}


def needed_by(obj: bytes) -> bool:
    return SYMBOL.encode() in obj


def regions() -> int:
    """Parallel regions this process has run on more than one thread (for tests)."""
    return pool().fields["regions"].value if _pools else 0


@contextmanager
def limit(n: int) -> Iterator[None]:
    """At most `n` threads (the caller's among them) take part in each parallel region
    while this lasts, in every thread of the process: limit(1) runs every region inline.
    Results do not depend on it: a tuning and testing knob."""
    if n < 1:
        raise ValueError(f"rune_jit: limit(n) needs n >= 1, got {n}")
    field = pool().fields["limit"]
    before, field.value = field.value, n - 1
    try:
        yield
    finally:
        field.value = before


def _reset_in_child() -> None:
    if _pools:
        _pools[0].reset(config.num_threads - 1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)
