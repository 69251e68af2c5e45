"""Compiled programs: build the LLVM function, load it, and call it from Python.

Calling convention: `int64 f(PyArrayObject *in..., PyArrayObject *out...)`. The
function reads each array's data pointer from the object itself, which costs
the caller one `id()` per array instead of NumPy's `.ctypes` attribute (about
1.5 µs each). Inputs are C-contiguous arrays of the expected dtypes; outputs
are allocated here with `np.empty` and filled by the function. ctypes releases
the GIL for the call. A nonzero result is a failure: kind | site << 8 | lane << 32.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, NamedTuple, Sequence

import llvmlite.ir as ir
import numpy as np

from .... import errors
from ....call import compile_log, disk_cache, dispatch, gc_pause
from ....call.forks import renew_in_child
from ....ir import UNSIZED, Region, Type, Var, digest
from ....passes.constants import lift_constants
from ....tracebacks import hidden
from ...stats import counts as stats
from ..codegen import complex_pairs, emit, mathlib
from ..codegen.emit import PTR, Fn
from ..codegen.failures import ErrorSites
from ..codegen.lower import Lowerer
from ..codegen.values import Array, Scalar
from ..rules import callback, checks
from . import entry, front, interrupt, llvm, sigint, threads
from .pool import POOL

_names = itertools.count()


@dataclass
class Meta:
    """What a caller needs to know of compiled code: its symbol, types and failure sites."""

    symbol: str
    in_types: list[Type]
    out_types: list[Type]
    sites: list = field(default_factory=list)
    scratch_bytes: int = 0
    entry: bool = False  # whether the program has a native entry (entry.py)
    program: str = ""  # the digest of the program it is the code of

    def to_json(self) -> dict:
        types = lambda ts: [[t.dtype.str, list(t.shape)] for t in ts]  # noqa: E731
        return {"symbol": self.symbol, "in": types(self.in_types),
                "out": types(self.out_types), "sites": self.sites,
                "scratch": self.scratch_bytes, "entry": self.entry, "program": self.program}

    @staticmethod
    def from_json(d: dict) -> "Meta":
        """Metadata read back; raises KeyError, TypeError or ValueError if malformed."""
        types = lambda ts: [Type(np.dtype(s), tuple(int(n) for n in shape))  # noqa: E731
                            for s, shape in ts]
        sites = [(str(kind), dict(info)) for kind, info in d["sites"]]
        meta = Meta(str(d["symbol"]), types(d["in"]), types(d["out"]), sites,
                    int(d["scratch"]), bool(d["entry"]), str(d["program"]))
        if meta.scratch_bytes < 0:
            raise ValueError("negative scratch size")
        return meta


@dataclass
class Built:
    """A program as LLVM IR, with its metadata and the bytes of its temporaries."""

    llvm_ir: str
    meta: Meta
    arena_bytes: int = 0


def build(region: Region, symbol: str | None = None) -> Built:
    """The LLVM IR of a closed region as a function of its params and outputs."""
    symbol = symbol or f"rune_program_{next(_names)}"
    module = ir.Module(symbol)
    n_in, n_out = len(region.params), len(region.outputs)
    fn = Fn(module, symbol, [PTR] * (n_in + n_out))
    sites = ErrorSites()
    lw = Lowerer(fn, sites)
    data = [entry.data_pointer(fn.at_entry, a) for a in fn.func.args[:-1]]
    args = [_argument(lw, t, p) for t, p in zip(region.in_types, data)]
    dests: dict = {}
    for o, d in zip(region.outputs, data[n_in:]):
        if isinstance(o, Var) and o not in region.params:
            dests.setdefault(o, d)
    outs = lw.lower_region(region, args, dests)
    for v, dest in zip(outs, data[n_in:]):
        lw.store(v, dest)
    fn.finish()
    mathlib.finish_module(module)
    meta = Meta(symbol, region.in_types, region.out_types, sites.sites, fn.scratch_bytes,
                entry.eligible(region.in_types, region.out_types, fn.scratch_bytes))
    return Built(str(module), meta, fn.arena_size)


def _argument(lw: Lowerer, t: Type, ptr: ir.Value):
    arr = Array(t, ptr)
    return Scalar(t, lw.scalar(arr)) if t.shape == () else arr


KEEP_SCRATCH = 64 << 20  # bytes of scratch memory a thread keeps between calls


class Compiled:
    """Native code for one program; call it with arrays, get arrays back."""

    def __init__(self, key: str, meta: Meta, obj: bytes):
        # key: the program's disk cache key; obj: its object code (jit saves it with
        # the traced program, so that a new process loads one file, and one for the
        # entry of each signature)
        self.key, self.meta, self.obj = key, meta, obj
        # the image (or tracker) keeps the code mapped as long as this object lives
        with compile_log.stage("load"):
            self.image, (self.address,) = llvm.link(obj, [meta.symbol], {
                **callback.imports(), **interrupt.imports(),
                **(threads.imports() if threads.needed_by(obj) else {})})
        n = len(meta.in_types) + len(meta.out_types) + 1
        self.cfunc = _signature(n)(self.address)
        self.entry_code: entry.Code | None = None  # made when a caller asks for it
        self.allocators = [POOL.allocator(t) for t in meta.out_types]
        for t in meta.out_types:
            POOL.prepare(t)
        self.local = threading.local()  # each thread's scratch memory, kept between calls

    @property
    def portable(self) -> bool:
        """Whether another process may run this code (it calls back into none of this
        process's Python functions)."""
        return callback.SYMBOL.encode() not in self.obj

    def entry_address(self) -> int:
        """The address of the native entry of this program's kind of arguments (meta.entry)."""
        if self.entry_code is None:
            with compile_log.stage("entry"):
                self.entry_code = entry.code(self.meta.in_types, self.meta.out_types)
        return self.entry_code.address

    def scratch(self) -> tuple[int, Any]:
        """(the address of scratch memory for a call, 64-byte aligned; what holds it):
        this thread's, kept between calls, or for an arena over KEEP_SCRATCH bytes (a long
        gradient's tapes) one of the call's own, returned to the system when it ends."""
        if self.meta.scratch_bytes > KEEP_SCRATCH:
            buf = np.empty(self.meta.scratch_bytes + 64, np.uint8)
            return -(-buf.ctypes.data // 64) * 64, buf
        addr = getattr(self.local, "addr", None)
        if addr is None:
            self.local.buf = np.empty(self.meta.scratch_bytes + 64, np.uint8)
            addr = self.local.addr = -(-self.local.buf.ctypes.data // 64) * 64
        return addr, self.local.buf

    def run(self, values: Sequence[Any]) -> list[np.ndarray]:
        return self.run_exact([as_input(x, t) for x, t in zip(values, self.meta.in_types)])

    def run_exact(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Call with arrays known to be contiguous and of the expected dtypes."""
        outs = [new() for new in self.allocators]
        scratch, _held = self.scratch() if self.meta.scratch_bytes else (None, None)
        status = self.cfunc(*map(id, arrays), *map(id, outs), scratch)
        if status:
            raise failure(status, self.meta.sites)
        return outs


class Executable(NamedTuple):
    """Compiled code and the constants lifted out of its program; the program, if known,
    to run again in the interpreter when a check fails (checks.replay)."""

    compiled: Compiled
    constants: list
    region: Region | None = None

    def run(self, values: Sequence[Any]) -> list[np.ndarray]:
        return self._replaying(self.compiled.run, values)

    def run_exact(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._replaying(self.compiled.run_exact, arrays)

    def _replaying(self, run: Callable, values: Sequence[Any]) -> list[np.ndarray]:
        try:
            return run(self.constants + list(values))
        except checks.CheckFailed as err:
            if self.region is None:
                raise
            failed = err
        return checks.replay(self.region, values, failed)  # (not chained to the status)

    def record(self) -> tuple[dict, bytes, list] | None:
        """(metadata, object code, constants): what a saved program keeps of it (None for
        code that only this process may run)."""
        code = self.compiled
        if not code.portable or checks.present(code.meta.sites):  # no program to replay
            return None
        return {"key": code.key, "code": llvm.stamped(code.meta.to_json())}, code.obj, \
            self.constants

    def entry(self, slow: Callable, weak: int = 0, plan: dispatch.Plan | None = None
              ) -> Callable | None:
        """The native entry for calls of exactly this program's argument types, those
        whose bits `weak` sets Python numbers (a builtin that checks them, or hands the
        call to `slow`), if it has one; with a plan, for calls of that structure (the
        entry behind a front: front.py)."""
        code = self.compiled
        if not code.meta.entry or self.constants:
            return None
        meta = code.meta
        leaves = entry.builtin(code.entry_address(), slow if plan is None else dispatch.missed,
                               raiser(meta.sites), code, weak, kernel=code.address,
                               shapes=entry.dims(meta.in_types, meta.out_types))
        return leaves if plan is None else front.front(plan, leaves, slow)


def load(record: dict, obj: bytes, constants: list) -> Executable | None:
    """The program a saved record names: its code, from this process or the record."""
    code = compiled(str(record["key"]), None, entry=disk_cache.Entry(record["code"], obj))
    return None if code is None else Executable(code, constants)


# Code in this process, by key: as long as something uses it (a jitted function's
# program), and the most recently used RECENT programs whatever holds them (loops called
# outside jit, which make their program anew each call). Code nobody holds is unmapped.
_cache: weakref.WeakValueDictionary[str, Compiled] = weakref.WeakValueDictionary()
_recent: OrderedDict[str, Compiled] = OrderedDict()
RECENT = 64
_cache_lock = renew_in_child(sys.modules[__name__], "_cache_lock")


def prepare(region: Region) -> Executable:
    """Native code for a closed region, compiled once per program in this process."""
    if complex_pairs.holds_complex(region):
        return complex_pairs.Pairs(region, prepare)
    for i, t in enumerate(region.out_types):
        if t.unsized:
            raise NotImplementedError(f"rune_jit: output {i} of the program, {t}, cannot be "
                                      f"returned: {UNSIZED}")
    lifted, constants = lift_constants(region)
    program = digest(lifted)
    return Executable(compiled(disk_cache.key(program, llvm.fingerprint()), program, lifted),
                      constants, region)


def compiled(k: str, program: str | None, region: Region | None = None,
             entry: disk_cache.Entry | None = None) -> Compiled | None:
    """The native code of the program whose digest is `program` and cache key `k`: from
    this process, else from `entry` (metadata and object code read from disk already),
    else from the disk cache, else compiled from `region` (None without a region).
    Without the digest (a saved program names only its key), the entry's own must give
    the key."""
    with _cache_lock:  # concurrent first calls compile once
        code = _cache.get(k)
        if code is None:
            with compile_log.stage("disk cache"):
                code = _from_disk(k, program, entry or disk_cache.load(k))
            if code is not None:
                compile_log.event("loaded from the disk cache")
            elif region is not None:
                code = _compile(k, program, region)
            if code is None:
                return None
            _cache[k] = code
        else:
            compile_log.event("code in memory")
        _recent[k] = code
        _recent.move_to_end(k)
        if len(_recent) > RECENT:
            _recent.popitem(last=False)
    return code


def _from_disk(k: str, program: str | None, entry: disk_cache.Entry | None
               ) -> Compiled | None:
    """Code from a disk entry, or None if there is none or it does not load: metadata
    of another shape, the code of another program, or code that does not link here (the
    key covers the CPU and the versions, not every library of the machine that wrote it),
    or code that needs a CPU feature this machine lacks."""
    if entry is None or not llvm.runs_here(entry.meta):
        return None
    try:
        meta = Meta.from_json(entry.meta)
        if (meta.program != program if program is not None
                else disk_cache.key(meta.program, llvm.fingerprint()) != k):
            return None
        code = Compiled(k, meta, entry.payload)
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
    stats["loaded"] += 1
    return code


@lru_cache(maxsize=None)
def _signature(n: int):
    """The ctypes type of a program of n pointers (made once: making one costs more
    than a call)."""
    return ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_void_p] * n)


def _compile(k: str, program: str, region: Region) -> Compiled:
    with gc_pause.paused():
        return _compiled_now(k, program, region)


def _compiled_now(k: str, program: str, region: Region) -> Compiled:
    from ..codegen.pipeline import before_lowering, dumping

    sigint.install()  # before the first program runs: Ctrl-C stops it
    with compile_log.stage("passes"):
        final = before_lowering(region)
    with compile_log.stage("lowering"):
        built = build(final, symbol=f"rune_{k[:24]}")
    built.meta.program = program
    with compile_log.stage("LLVM optimize"):
        mod = llvm.optimize(built.llvm_ir)
    if dumping("llvm"):
        print(str(mod), file=sys.stderr)
    if dumping("asm"):
        print(llvm.emit_assembly(mod), file=sys.stderr)
    with compile_log.stage("LLVM codegen"):
        obj = llvm.emit_object(mod)
    compile_log.event("compiled")
    stats["compiled"] += 1
    code = Compiled(k, built.meta, obj)
    if code.portable:
        llvm.cache_code(k, built.meta.to_json(), obj)
    return code


def run_eqn(prim, interpret: Callable, args: Sequence[Any], params: dict,
            compile: Callable[[Region], Any] | None = None) -> list[np.ndarray]:
    """One equation called outside jit (a loop at the prompt), as native code (or the
    code `compile` makes of its program: backend/iree.py); in the interpreter if its
    results are tapes sized by the steps taken (a program's outputs are allocated before
    it runs)."""
    from ....trace import bind, trace_flat, type_of_value

    region = trace_flat(lambda *xs: bind(prim, *xs, **params), [type_of_value(a) for a in args])
    if any(t.unsized for t in region.out_types):
        return interpret(*args, **params)
    return (compile or prepare)(region).run(args)  # prepare as it is now (tests wrap it)


def failure(status: int, sites: Sequence) -> Exception:
    """The error a failure status stands for, with a note naming the user's line."""
    kind, site, lane = status & 0xFF, (status >> 8) & 0xFFFFFF, status >> 32
    info = sites[site][1] if site < len(sites) else {}
    err = _failure(kind, lane, info) or RuntimeError(
        f"rune_jit: compiled code failed with status {status}")
    if info.get("source"):
        errors.add_note(err, f"(raised by compiled code for the line {info['source']})")
    return err


def _failure(kind: int, lane: int, info: dict) -> Exception | None:
    if kind == emit.KINDS["iterate"]:
        index = errors.user_lane(lane, tuple(info["lanes"]), tuple(info["shown"]))
        return errors.IterateError(errors.iterate_message(info["max_steps"], index))
    if kind == emit.KINDS["memory"]:
        return MemoryError("rune_jit: a compiled program could not allocate its memory")
    if kind == emit.KINDS["singular"]:
        return np.linalg.LinAlgError(info.get("message", "rune_jit solve: the matrix is "
                                              "singular"))
    if kind == emit.KINDS["index"]:  # the index's low 32 bits ride in the lane's place
        bad = lane - (1 << 32) if lane >= 1 << 31 else lane
        return IndexError(f"index {bad} is out of bounds for axis {info['axis']} with size "
                          f"{info['size']}")
    if kind == emit.KINDS["interrupt"]:
        return interrupt.raised()
    if kind == emit.KINDS["callback"]:
        return callback.raised() or RuntimeError("rune_jit: a debug callback failed")
    if kind == emit.KINDS["check"]:
        return checks.CheckFailed(info.get("source"))
    if kind == emit.KINDS["negative_power"]:
        return ValueError("Integers to negative integer powers are not allowed.")
    return None


def as_input(x: Any, t: Type) -> np.ndarray:
    """`x` as the contiguous array of type `t` the compiled code reads."""
    a = np.asarray(x)
    if a.dtype != t.dtype or not a.flags.c_contiguous or not a.flags.aligned:
        a = np.ascontiguousarray(a, dtype=t.dtype)
    return a


def raiser(sites: Sequence) -> Callable[[int], Exception]:
    """What a native entry calls with a failure status: its error, to raise as an API
    boundary raises it (rune_jit's frames hidden; the entry raises it)."""
    def error_of(status: int) -> Exception:
        return hidden(failure(status, sites))
    return error_of
