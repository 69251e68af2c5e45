"""The pool's native code (threads.py): `rune.parallel_for`, the workers' loop, a reset.

State lives in module globals (one int64 each, and a pthread mutex and two condition
variables), so that the code needs nothing from Python once running: a region claims
the pool with a compare-and-swap of `busy` (taken: run inline), starts the workers not
started yet, publishes the job and a new `generation` under the mutex, wakes the
workers, runs blocks itself, closes the region and waits for the workers that joined it.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..codegen.emit import I1, I32, I64, PTR, Indirect, declare

SYMBOL = "rune.parallel_for"
FIELDS = ("wanted", "started", "limit", "busy", "generation", "born", "fn", "ctx",
          "n_blocks", "next", "open", "joined", "participants", "failed_block",
          "failed_status", "regions")
EXPORTED = ("limit", "regions")  # read or written from Python
SYNC_BYTES = 128  # per mutex or condition variable: glibc's are 40 and 48 bytes
SIGSET_BYTES = 128  # glibc's sigset_t
SPINS = 4000  # the caller's polls of the workers still running before it sleeps
# A thread takes the blocks left over this many times the region's threads at once (at
# least one): a few claims a thread and region, where one claim a block made the shared
# counter's cache line cross cores for each (the threads bench's Mandelbrot, 31,250
# blocks of 32 lanes, 0.3 us each, on znver5: 10.2 ms on one thread, 8 to 11.8 on two
# with a claim a block, 5.4 to 6.3 with these), yet a claim is at most a quarter of a
# thread's share, and the last ones are single blocks, so a straggler holds up little.
CLAIMS = 4
# fields each on a cache line of their own: the counter every claim writes, and what a
# claim reads beside it
OWN_LINE = ("next", "failed_block")
POLL_CYCLES = 1 << 18  # a worker's polling for the next region (time-stamp counts: ~0.1 ms)
# The same on other machines, in nanoseconds of clock_gettime: aarch64's cycle counter
# (PMCCNTR_EL0, what llvm.readcyclecounter reads there) faults in user mode on Linux
POLL_NS = 100_000
CLOCK_MONOTONIC = 1  # Linux's, on every machine


def module_ir(arch: str) -> str:
    """The pool's module, as LLVM IR, for machine `arch` ("x86_64", "aarch64"; any other
    takes the portable path: no spin hint, clock_gettime)."""
    return _Builder(arch).build()


class _Builder:
    """The pool's module: its state, its three functions and their helpers."""

    def __init__(self, arch: str):
        self.m = ir.Module("rune.threads")
        self.arch = arch
        self.fields = {}
        for name in FIELDS:
            t = ir.ArrayType(I64, 8) if name in OWN_LINE else I64
            g = ir.GlobalVariable(self.m, t, f"rune.pool.{name}")
            g.initializer, g.align = ir.Constant(t, None), 64 if name in OWN_LINE else 8
            g.linkage = "" if name in EXPORTED else "internal"
            self.fields[name] = g.gep([ir.Constant(I32, 0)] * 2) if name in OWN_LINE else g
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

    def pause(self, b: ir.IRBuilder) -> None:
        """A spin-wait hint: x86's PAUSE, aarch64's YIELD, else nothing."""
        if self.arch == "x86_64":
            b.call(self.m.declare_intrinsic("llvm.x86.sse2.pause",
                                            fnty=ir.FunctionType(ir.VoidType(), [])), [])
        elif self.arch == "aarch64":
            hint = self.m.declare_intrinsic("llvm.aarch64.hint",
                                            fnty=ir.FunctionType(ir.VoidType(), [I32]))
            b.call(hint, [ir.Constant(I32, 1)])  # 1: YIELD

    def clock(self, b: ir.IRBuilder) -> tuple[ir.Value, int]:
        """A reading of a cheap monotonic clock, and the polling budget in its units: the
        time-stamp counter on x86-64, clock_gettime (the vDSO's) elsewhere."""
        if self.arch == "x86_64":
            counter = self.m.declare_intrinsic("llvm.readcyclecounter",
                                               fnty=ir.FunctionType(I64, []))
            return b.call(counter, []), POLL_CYCLES
        gettime = declare(self.m, "clock_gettime", I32, [I32, PTR])
        ts = _entry_alloca(b.function, ir.ArrayType(I64, 2))  # struct timespec on LP64
        b.call(gettime, [ir.Constant(I32, CLOCK_MONOTONIC), ts])
        sec, nsec = (b.load(b.gep(ts, [ir.Constant(I32, 0), ir.Constant(I32, k)]), typ=I64)
                     for k in (0, 1))
        return b.add(b.mul(sec, ir.Constant(I64, 1_000_000_000)), nsec), POLL_NS

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
        """Take blocks from the shared counter, some at a time (CLAIMS), and run them until
        none is left, or the next is past a failed one; record the first failing block's
        status. A claim's blocks run in order and stop at the first that fails, so the
        claim's first block stands for it: a claim before it may still fail first."""
        fn = ir.Function(self.m, ir.FunctionType(ir.VoidType(), [PTR, PTR, I64]),
                         "rune.pool_run_blocks")
        fn.linkage = "internal"
        body, ctx, n = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        take, run, failed, done = (fn.append_basic_block(x) for x in (
            "take", "run", "failed", "done"))
        b.branch(take)
        b.position_at_end(take)
        one = ir.Constant(I64, 1)
        left = b.sub(n, self.get(b, "next", atomic=True))
        threads = b.add(self.get(b, "participants"), one)
        share = b.sdiv(left, b.mul(threads, ir.Constant(I64, CLAIMS)))
        size = b.select(b.icmp_signed(">", share, one), share, one)
        j = b.atomic_rmw("add", self.field(b, "next"), size, "monotonic")
        past = b.or_(b.icmp_signed(">=", j, n),
                     b.icmp_signed(">", j, self.get(b, "failed_block", atomic=True)))
        b.cbranch(past, done, run)
        b.position_at_end(run)
        end = b.add(j, size)
        end = b.select(b.icmp_signed("<", end, n), end, n)
        status = b.call(Indirect(body, self.body_t), [ctx, j, end, ir.Constant(PTR, None)])
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
        mask = b.alloca(ir.ArrayType(ir.IntType(8), SIGSET_BYTES))
        b.call(self.m.declare_intrinsic("llvm.memset", [PTR, I64]),
               [mask, ir.Constant(ir.IntType(8), 0xFF), ir.Constant(I64, SIGSET_BYTES),
                ir.Constant(I1, 0)])
        b.call(declare(self.m, "pthread_sigmask", I32, [I32, PTR, PTR]),
               [ir.Constant(I32, 0), mask, ir.Constant(PTR, None)])  # SIG_BLOCK: all
        seen = b.alloca(I64)
        self.call(b, "lock", "mutex")
        b.store(self.get(b, "born"), seen)
        top = fn.append_basic_block("top")
        b.branch(top)
        b.position_at_end(top)  # the mutex is held here
        self._poll_for_work(fn, b, seen)
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

    def _poll_for_work(self, fn, b, seen) -> None:
        """Poll for the next region a while before sleeping on the condition variable
        (the mutex is held before and after): a loop whose steps are regions then starts
        each in well under a microsecond, where waking a sleeping thread takes tens."""
        self.call(b, "unlock", "mutex")
        start, budget = self.clock(b)

        def idle():
            same = b.icmp_unsigned("==", self.get(b, "generation", atomic=True),
                                   b.load(seen, typ=I64))
            return b.and_(same, b.icmp_unsigned("<", b.sub(self.clock(b)[0], start),
                                                ir.Constant(I64, budget)))

        self.loop(fn, b, idle, lambda: self.pause(b))
        self.call(b, "lock", "mutex")

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
        """parallel_for(body, ctx, n): body(ctx, j, j + 1, null) for every block j, on the
        pool's threads, or body(ctx, 0, n, null) inline; -> the first failure's status."""
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
        b.ret(b.call(Indirect(body, self.body_t), [ctx, zero, n, ir.Constant(PTR, None)]))
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
        self._publish(b, body, ctx, n, helpers)
        b.call(self.run_blocks, [body, ctx, n])
        self._wait_for_workers(fn, b)
        status = self.get(b, "failed_status")
        self.call(b, "unlock", "mutex")
        b.store_atomic(zero, self.field(b, "busy"), "release", 8)
        b.ret(status)

    def _publish(self, b, body, ctx, n, helpers) -> None:
        """Post the job for `helpers` workers and wake them (the mutex is held; -> not)."""
        zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
        for name, value in (("fn", b.ptrtoint(body, I64)), ("ctx", b.ptrtoint(ctx, I64)),
                            ("n_blocks", n), ("next", zero), ("failed_block", n),
                            ("failed_status", zero), ("participants", helpers),
                            ("open", one)):
            self.put(b, name, value, atomic=name in ("next", "failed_block"))
        self.put(b, "generation", b.add(self.get(b, "generation"), one), atomic=True)
        self.put(b, "regions", b.add(self.get(b, "regions"), one))
        self.call(b, "broadcast", "work")
        self.call(b, "unlock", "mutex")

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

        def spinning():
            left = b.load(spins, typ=I64)
            return b.and_(b.icmp_signed(">", left, ir.Constant(I64, 0)),
                          b.icmp_signed(">", self.get(b, "joined", atomic=True),
                                        ir.Constant(I64, 0)))

        def spin():
            self.pause(b)
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
