"""A pool of native threads for compiled code: `parallel_for(body, ctx, n_blocks)`.

Compiled programs call `rune.parallel_for` for work in independent blocks (the lane
blocks of a vmapped iterate, lane_blocks.py), with the block loop outlined as
`i64 body(ptr ctx, i64 first, i64 end, ptr null)` (outline.py). The pool is a small
module of native code, compiled once per process (and cached on disk like programs),
so that idle workers sleep on a condition variable without the GIL and a region starts
in microseconds:

- the workers (RUNE_JIT_NUM_THREADS - 1 of them: the caller works too) are started by
  the first region, with pthread_create from native code, and block every signal
  (Ctrl-C reaches Python's thread; the blocks poll its count, interrupt.py);
- every thread of a region, the caller included, takes the next block from one atomic
  counter until none is left: a slow block holds up one thread for one block only;
  the caller then waits for the blocks still running, not for workers that have not
  woken yet (on a busy host a worker may wake late: it then finds the region closed);
- a block that fails records its status if it is the lowest failing block so far, and
  no thread starts a block past it: the region returns the status of the first failing
  block, which is the one a serial run returns (each block's lanes in order);
- a region entered while another runs (a second Python thread's call, or a region
  inside a region's block) runs inline on its caller: no deadlock, no oversubscription.

After os.fork the child has no workers: its pool is reset, and its first region starts
them again. `limit(n)` makes at most n threads take part (1: every region inline).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Iterator

import llvmlite.ir as ir

from ... import config, disk_cache
from . import llvm
from .emit import I1, I32, I64, PTR, declare
from .lower import Lowerer
from .outline import outline

SYMBOL = "rune.parallel_for"
# The pool's state: one int64 global each, besides its mutex and condition variables.
FIELDS = ("wanted", "started", "limit", "busy", "generation", "born", "fn", "ctx",
          "n_blocks", "next", "open", "joined", "participants", "failed_block", "failed_status",
          "regions")
EXPORTED = ("limit", "regions")  # read or written from Python
SYNC_BYTES = 128  # per mutex or condition variable: glibc's are 40 and 48 bytes
SPINS = 4000  # the caller's polls of the workers still running before it sleeps


def in_use() -> bool:
    """Whether compiled code may run on more threads than the caller's."""
    return config.num_threads > 1


def parallel_loop(lw: Lowerer, n_blocks: int, block: Callable[[ir.Value], None]) -> None:
    """`block(j)` for j in range(n_blocks), emitting through `lw`, on the pool's threads:
    the blocks become an outlined function (outline.py) that the pool runs; the status
    of the first failing block is the program's."""
    def body(first: ir.Value, end: ir.Value) -> None:
        lw.fn.loop(first, end, 1, [], lambda j, _: block(j) or [])

    out = outline(lw, lw.fn.module.get_unique_name("rune.blocks"), body)
    run = declare(lw.fn.module, SYMBOL, I64, [PTR, PTR, I64])
    status = lw.b.call(run, [out.function, out.ctx, lw.i64(n_blocks)])
    lw.fn.fail(lw.b.icmp_unsigned("!=", status, lw.i64(0)), status)


# ------------------------------------------------------------- the native module


class _Indirect:
    """A call through a function pointer (llvmlite's IRBuilder.call wants a callee that
    knows its function type, which an opaque pointer does not)."""

    def __init__(self, ptr: ir.Value, ftype: ir.FunctionType):
        self.ptr, self.function_type, self.type = ptr, ftype, ptr.type

    def get_reference(self) -> str:
        return self.ptr.get_reference()


class _Builder:
    """The pool's module: its state, its three functions and their helpers."""

    def __init__(self):
        self.m = ir.Module("rune.threads")
        self.fields = {}
        for name in FIELDS:
            g = ir.GlobalVariable(self.m, I64, f"rune.pool.{name}")
            g.initializer, g.align = ir.Constant(I64, 0), 8
            g.linkage = "" if name in EXPORTED else "internal"
            self.fields[name] = g
        self.sync = {}
        for name in ("mutex", "work", "done"):
            g = ir.GlobalVariable(self.m, ir.ArrayType(ir.IntType(8), SYNC_BYTES),
                                  f"rune.pool_{name}")
            g.initializer = ir.Constant(g.value_type, None)
            g.align, g.linkage = 64, "internal"
            self.sync[name] = g
        self.body_t = ir.FunctionType(I64, [PTR, I64, I64, PTR])
        self.pthread = {
            "lock": declare(self.m, "pthread_mutex_lock", I32, [PTR]),
            "unlock": declare(self.m, "pthread_mutex_unlock", I32, [PTR]),
            "wait": declare(self.m, "pthread_cond_wait", I32, [PTR, PTR]),
            "broadcast": declare(self.m, "pthread_cond_broadcast", I32, [PTR]),
            "signal": declare(self.m, "pthread_cond_signal", I32, [PTR])}

    def field(self, b: ir.IRBuilder, name: str) -> ir.Value:
        return self.fields[name]

    def get(self, b, name, atomic=False) -> ir.Value:
        if atomic:
            return b.load_atomic(self.field(b, name), "monotonic", 8, typ=I64)
        return b.load(self.field(b, name), typ=I64)

    def put(self, b, name, value, atomic=False) -> None:
        value = ir.Constant(I64, value) if isinstance(value, int) else value
        if atomic:
            b.store_atomic(value, self.field(b, name), "monotonic", 8)
        else:
            b.store(value, self.field(b, name))

    def call(self, b, what, *names) -> None:
        b.call(self.pthread[what], [self.sync[n] for n in names])

    def loop(self, fn, b, test, body) -> None:
        """while test(): body(), with the builder left after the loop."""
        head, inside, after = (fn.append_basic_block(n) for n in ("head", "body", "after"))
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(test(), inside, after)
        b.position_at_end(inside)
        body()
        b.branch(head)
        b.position_at_end(after)

    def build(self) -> str:
        self.run_blocks = self._run_blocks()
        worker = self._worker()
        self._reset()
        self._parallel_for(worker)
        return str(self.m)

    def _run_blocks(self) -> ir.Function:
        """Take blocks from the shared counter and run them until none is left, or the
        next is past a failed one; record the first failing block's status."""
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [PTR, PTR, I64]),
                         "rune.pool_run_blocks")
        fn.linkage = "internal"
        body, ctx, n = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        take, run, failed, done = (fn.append_basic_block(x) for x in (
            "take", "run", "failed", "done"))
        b.branch(take)
        b.position_at_end(take)
        j = b.atomic_rmw("add", self.field(b, "next"), ir.Constant(I64, 1), "monotonic")
        past = b.or_(b.icmp_signed(">=", j, n),
                     b.icmp_signed(">", j, self.get(b, "failed_block", atomic=True)))
        b.cbranch(past, done, run)
        b.position_at_end(run)
        status = b.call(_Indirect(body, self.body_t), [ctx, j, b.add(j, ir.Constant(I64, 1)),
                                                        ir.Constant(PTR, None)])
        b.cbranch(b.icmp_unsigned("!=", status, ir.Constant(I64, 0)), failed, take)
        b.position_at_end(failed)
        self.call(b, "lock", "mutex")
        with b.if_then(b.icmp_signed("<", j, self.get(b, "failed_block", atomic=True))):
            self.put(b, "failed_block", j, atomic=True)
            self.put(b, "failed_status", status)
        self.call(b, "unlock", "mutex")
        b.branch(take)
        b.position_at_end(done)
        b.ret_void()
        return fn

    def _job(self, b) -> tuple:
        return (b.inttoptr(self.get(b, "fn"), PTR), b.inttoptr(self.get(b, "ctx"), PTR),
                self.get(b, "n_blocks"))

    def _worker(self) -> ir.Function:
        """A worker's life: block signals, then wait for a region, run blocks, repeat."""
        fn = ir.Function(self.m, ir.FunctionType(PTR, [PTR]), "rune.pool_worker")
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        index = b.ptrtoint(fn.args[0], I64)
        mask = b.alloca(ir.ArrayType(ir.IntType(8), 128))
        b.store(ir.Constant(mask.allocated_type, bytearray(b"\xff" * 128)), mask)
        b.call(declare(self.m, "pthread_sigmask", I32, [I32, PTR, PTR]),
               [ir.Constant(I32, 0), mask, ir.Constant(PTR, None)])  # SIG_BLOCK: all
        seen = b.alloca(I64)
        self.call(b, "lock", "mutex")
        b.store(self.get(b, "born"), seen)
        top = fn.append_basic_block("top")
        b.branch(top)
        b.position_at_end(top)  # the mutex is held here
        self.loop(fn, b, lambda: b.icmp_unsigned("==", self.get(b, "generation"),
                                                 b.load(seen, typ=I64)),
                  lambda: self.call(b, "wait", "work", "mutex"))
        b.store(self.get(b, "generation"), seen)
        joins = b.and_(b.icmp_signed("<", index, self.get(b, "participants")),
                       b.icmp_unsigned("!=", self.get(b, "open"), ir.Constant(I64, 0)))
        with b.if_then(joins):
            self.put(b, "joined", b.add(self.get(b, "joined"), ir.Constant(I64, 1)),
                     atomic=True)
            job = self._job(b)
            self.call(b, "unlock", "mutex")
            b.call(self.run_blocks, list(job))
            self.call(b, "lock", "mutex")
            left = b.sub(self.get(b, "joined"), ir.Constant(I64, 1))
            self.put(b, "joined", left, atomic=True)
            with b.if_then(b.icmp_signed("==", left, ir.Constant(I64, 0))):
                self.call(b, "signal", "done")
        b.branch(top)
        return fn

    def _reset(self) -> None:
        """rune.pool_reset(wanted): a pool of no threads yet, `wanted` workers to start
        (at load, and in a forked child, whose mutex another thread may have held)."""
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [I64]), "rune.pool_reset")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        for name in FIELDS:
            self.put(b, name, 0)
        self.put(b, "wanted", fn.args[0])
        self.put(b, "limit", fn.args[0])
        b.call(declare(self.m, "pthread_mutex_init", I32, [PTR, PTR]),
               [self.sync["mutex"], ir.Constant(PTR, None)])
        for name in ("work", "done"):
            b.call(declare(self.m, "pthread_cond_init", I32, [PTR, PTR]),
                   [self.sync[name], ir.Constant(PTR, None)])
        b.ret_void()

    def _start_workers(self, fn, b, worker) -> None:
        """Start the workers not started yet (the mutex is held); stop at the first
        that the system refuses (fewer threads, never an error)."""
        self.put(b, "born", self.get(b, "generation"))
        create = declare(self.m, "pthread_create", I32, [PTR, PTR, PTR, PTR])
        detach = declare(self.m, "pthread_detach", I32, [I64])
        tid, stop = _entry_alloca(fn, I64), _entry_alloca(fn, I1)
        b.store(ir.Constant(I1, 0), stop)

        def more():
            return b.and_(b.not_(b.load(stop, typ=I1)), b.icmp_signed(
                "<", self.get(b, "started"), self.get(b, "wanted")))

        def one():
            i = self.get(b, "started")
            ok = b.icmp_signed("==", b.call(create, [tid, ir.Constant(PTR, None), worker,
                                                     b.inttoptr(i, PTR)]), ir.Constant(I32, 0))
            with b.if_else(ok) as (then, otherwise):
                with then:
                    b.call(detach, [b.load(tid, typ=I64)])
                    self.put(b, "started", b.add(i, ir.Constant(I64, 1)))
                with otherwise:
                    b.store(ir.Constant(I1, 1), stop)

        self.loop(fn, b, more, one)

    def _parallel_for(self, worker) -> None:
        fn = ir.Function(self.m, ir.FunctionType(I64, [PTR, PTR, I64]), SYMBOL)
        body, ctx, n = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        inline, claimed, shared = (fn.append_basic_block(x) for x in (
            "inline", "claimed", "shared"))
        zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
        with b.if_then(b.icmp_signed(">=", n, ir.Constant(I64, 2))):
            pair = b.cmpxchg(self.field(b, "busy"), zero, one, "acquire", "monotonic")
            b.cbranch(b.extract_value(pair, 1), claimed, inline)
        b.branch(inline)
        b.position_at_end(inline)
        b.ret(b.call(_Indirect(body, self.body_t), [ctx, zero, n, ir.Constant(PTR, None)]))
        b.position_at_end(claimed)
        self.call(b, "lock", "mutex")
        with b.if_then(b.icmp_signed("<", self.get(b, "started"), self.get(b, "wanted")),
                       likely=False):
            self._start_workers(fn, b, worker)
        started, limit = self.get(b, "started"), self.get(b, "limit")
        helpers = b.select(b.icmp_signed("<", started, limit), started, limit)
        nobody = b.icmp_signed("<=", helpers, zero)
        with b.if_then(nobody, likely=False):
            self.call(b, "unlock", "mutex")
            b.store_atomic(zero, self.field(b, "busy"), "release", 8)
        b.cbranch(nobody, inline, shared)
        b.position_at_end(shared)
        for name, value in (("fn", b.ptrtoint(body, I64)), ("ctx", b.ptrtoint(ctx, I64)),
                            ("n_blocks", n), ("next", zero), ("failed_block", n),
                            ("failed_status", zero), ("participants", helpers),
                            ("open", one)):
            self.put(b, name, value, atomic=name in ("next", "failed_block"))
        self.put(b, "generation", b.add(self.get(b, "generation"), one))
        self.put(b, "regions", b.add(self.get(b, "regions"), one))
        self.call(b, "broadcast", "work")
        self.call(b, "unlock", "mutex")
        b.call(self.run_blocks, [body, ctx, n])
        self._wait_for_workers(fn, b)
        status = self.get(b, "failed_status")
        self.call(b, "unlock", "mutex")
        b.store_atomic(zero, self.field(b, "busy"), "release", 8)
        b.ret(status)

    def _wait_for_workers(self, fn, b) -> None:
        """Close the region to workers not woken yet (on a busy host one may wake late:
        the caller does not wait for it), poll those running blocks a while (they end
        about when the caller does), then sleep until the last signals; -> with the
        mutex held."""
        self.call(b, "lock", "mutex")
        self.put(b, "open", 0)
        self.call(b, "unlock", "mutex")
        spins = _entry_alloca(fn, I64)
        b.store(ir.Constant(I64, SPINS), spins)
        pause = ir.Function(self.m, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")

        def spinning():
            left = b.load(spins, typ=I64)
            return b.and_(b.icmp_signed(">", left, ir.Constant(I64, 0)),
                          b.icmp_signed(">", self.get(b, "joined", atomic=True),
                                        ir.Constant(I64, 0)))

        def spin():
            b.call(pause, [])
            b.store(b.sub(b.load(spins, typ=I64), ir.Constant(I64, 1)), spins)

        self.loop(fn, b, spinning, spin)
        self.call(b, "lock", "mutex")
        self.loop(fn, b, lambda: b.icmp_signed(">", self.get(b, "joined", atomic=True),
                                               ir.Constant(I64, 0)),
                  lambda: self.call(b, "wait", "done", "mutex"))


def _entry_alloca(fn: ir.Function, t: ir.Type) -> ir.Value:
    """A stack slot made once, at the start of the function's entry block (not in a loop)."""
    b = ir.IRBuilder(fn.entry_basic_block)
    b.position_at_start(fn.entry_basic_block)
    return b.alloca(t)


class _Pool:
    """The loaded pool: its code (kept mapped while the process lives) and its state."""

    def __init__(self):
        llvm_ir = _Builder().build()
        key = disk_cache.key(hashlib.sha256(llvm_ir.encode()).hexdigest(),
                             llvm.fingerprint())
        entry = disk_cache.load(key)
        obj = entry.payload if entry is not None else None
        if obj is None:
            obj = llvm.emit_object(llvm.optimize(llvm_ir))
            disk_cache.store(key, {"pool": True}, obj)
        names = [SYMBOL, "rune.pool_reset"] + [f"rune.pool.{n}" for n in EXPORTED]
        self.image, (self.parallel_for, reset, *fields) = llvm.link(obj, names)
        self.reset = ctypes.CFUNCTYPE(None, ctypes.c_int64)(reset)
        self.fields = {n: ctypes.c_int64.from_address(a) for n, a in zip(EXPORTED, fields)}
        self.reset(config.num_threads - 1)


@lru_cache(maxsize=None)
def pool() -> _Pool:
    """The pool of this process (its code compiled or loaded on first use)."""
    return _Pool()


def imports() -> dict[str, int]:
    """The pool's entry point, under the name compiled code calls it by."""
    return {SYMBOL: pool().parallel_for}


def needed_by(obj: bytes) -> bool:
    return SYMBOL.encode() in obj


def regions() -> int:
    """Parallel regions this process has run on more than one thread (for tests)."""
    return pool().fields["regions"].value if pool.cache_info().currsize else 0


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
    if pool.cache_info().currsize:
        pool().reset(config.num_threads - 1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)
