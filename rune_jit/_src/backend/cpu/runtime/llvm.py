"""LLVM set up once per process; modules optimized, compiled to object code and loaded.

Object code is loaded by `elf_loader` where it can (x86-64 Linux), else linked by ORC's
LLJIT, one engine per process. LLJIT rather than MCJIT because it refuses, at link time,
code that calls a symbol nobody defines (MCJIT links it and the call crashes); the
loader refuses it too.
"""

from __future__ import annotations

import itertools
import os
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding.newpassmanagers import NewPassManager

from .... import config
from .... import target_cpu
from ....call import disk_cache
from ....call.forks import renew_in_child
from . import elf_loader, fft_kernels, openblas, pocketfft

_lock = renew_in_child(sys.modules[__name__], "_lock")
_names = itertools.count()


@lru_cache(maxsize=None)
def math_libraries() -> None:
    """Scalar and vector math (libm, libmvec) where compiled code finds them, if present;
    and libgcc's float16 conversions (GCC 12 and newer), which LLVM calls for a target
    without F16C (x86-64-v2 CPUs: Nehalem, Atoms)."""
    for lib in ("libm.so.6", "libmvec.so.1", "libgcc_s.so.1"):
        try:
            llvm.load_library_permanently(lib)
        except RuntimeError:
            pass


@lru_cache(maxsize=None)
def target() -> target_cpu.Target:
    """The CPU code is generated for: RUNE_JIT_CPU and RUNE_JIT_CPU_FEATURES (config.py),
    checked (ValueError if LLVM does not know them)."""
    return target_cpu.resolve(config.cpu, config.cpu_features)


@lru_cache(maxsize=None)
def target_machine() -> llvm.TargetMachine:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    math_libraries()
    machine = llvm.Target.from_triple(llvm.get_process_triple())
    return machine.create_target_machine(cpu=target().cpu, features=target().features,
                                         opt=3, jit=True)


@lru_cache(maxsize=None)
def target_features() -> frozenset[str]:
    """The features code for the target may use: every choice by CPU follows these, not
    the host's, so that this machine can generate (and test) another CPU's code. The
    host's own are those it detects (probing costs 40 ms, once; the tests check that
    the probes find the same)."""
    if config.cpu == "host" and not config.cpu_features:
        return target_cpu.host_features() & target_cpu.PROBES.keys()
    return target_cpu.probed_features(emit_assembly, str(target_machine().target_data))


def runs_here(meta: dict) -> bool:
    """Whether the code of a disk cache entry with this metadata may run on this machine:
    it names the features its code needs (`stamped`), and this machine has them all.
    The key covers the target already; this holds where keys agree and CPUs do not."""
    needs = meta.get("target", {}).get("requires") if isinstance(meta, dict) else None
    return isinstance(needs, list) and not target_cpu.lacking(needs)


def stamped(meta: dict) -> dict:
    """`meta` with the target its code was made for, as `runs_here` reads it."""
    return {**meta, "target": {"cpu": target().cpu, "features": target().features,
                               "requires": sorted(target_features())}}


def cached_code(k: str, kind: str = ".bin") -> disk_cache.Entry | None:
    """Entry `k` of the disk cache, if its code runs here."""
    found = disk_cache.load(k, kind)
    return found if found is not None and runs_here(found.meta) else None


def cache_code(k: str, meta: dict, obj: bytes, kind: str = ".bin") -> None:
    """Store object code in the disk cache, stamped with what it needs."""
    disk_cache.store(k, stamped(meta), obj, kind)


@lru_cache(maxsize=None)
def engine() -> llvm.LLJIT:
    """The LLJIT that links object code (it never compiles: no target machine of ours, so
    a process that loads its programs from disk need not make one)."""
    llvm.initialize_native_target()
    # aarch64's RuntimeDyld fails on a relocation past its +-4 GB reach (code and data are
    # mapped apart, libraries further); JITLink makes the GOT entries and stubs it needs
    return llvm.create_lljit_compiler(suppress_errors=True,
                                      use_jit_link=target_arch() == "aarch64")


@lru_cache(maxsize=None)
def fingerprint() -> str:
    """What compiled code depends on besides the program: target CPU and features
    (RUNE_JIT_CPU, or the host's), versions (the
    Python version too: which C API functions a native entry calls depends on it), and
    whether it may run on several threads (RUNE_JIT_NUM_THREADS=1 compiles serial code),
    the OpenBLAS kernels asked for (which products call gemm depends on them: blas.py), and
    where transcendental functions come from (RUNE_JIT_MATH)."""
    return "|".join([target().cpu, target().features, llvmlite.__version__, config.math,
                     ".".join(map(str, llvm.llvm_version_info)), sys.implementation.cache_tag,
                     "openblas:" + os.environ.get("OPENBLAS_CORETYPE", "")]
                    + (["threads"] if config.num_threads > 1 else []))


def target_arch() -> str:
    """The machine compiled code is for, as LLVM's triple names it: "x86_64", "aarch64"."""
    return llvm.get_process_triple().split("-")[0]


def vector_bits() -> int:
    """The width of the target's vector registers, in bits: AVX-512's, AVX's, else 128
    (SSE, aarch64's NEON)."""
    feats = target_features()
    if "avx512f" in feats:
        return 512
    return 256 if "avx" in feats else 128


def optimize(llvm_ir: str) -> llvm.ModuleRef:
    """The module, optimized. LLVM's vectorizers have been seen to leave invalid IR
    behind (22.1's SLP vectorizer: an instruction that does not dominate its use, which
    then aborts the process in code generation), so the result is verified, and a module
    they broke is optimized again without them."""
    for vectorizers in ((True, True), (False, True), (False, False)):
        mod = _optimized(llvm_ir, *vectorizers)
        try:
            mod.verify()
            return mod
        except RuntimeError:
            continue
    raise RuntimeError("rune_jit: LLVM's optimizer produced invalid code for this program")


def parsed(llvm_ir: str) -> llvm.ModuleRef:
    """The module, verified, for this machine, not optimized (code that is not hot)."""
    mod = llvm.parse_assembly(llvm_ir)
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(target_machine().target_data)
    mod.verify()
    return mod


def _optimized(llvm_ir: str, slp: bool, loops: bool) -> llvm.ModuleRef:
    tm = target_machine()
    mod = parsed(llvm_ir)
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pto.loop_vectorization = loops
    pto.slp_vectorization = slp
    # Unrolling (beyond the vectorizer's own interleaving) made code a third bigger and
    # compilation slower for no measured gain on the benchmarks: our inner loops are
    # vectorized or latency-bound recurrences, and lane blocks are explicit vectors.
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        with _slp_threshold(SLP_THRESHOLD):
            mpm.run(mod, pb)
    finally:
        _dispose(mpm)
    return mod


def _dispose(mpm) -> None:
    """Free a module pass manager. llvmlite 0.50's ModulePassManager never frees its own
    (its base class's `_dispose`, a no-op, shadows the one that would): about 140 KB a
    program, for as long as the process lives."""
    NewPassManager._dispose(mpm)
    mpm.detach()


# LLVM's SLP vectorizer packs two isomorphic scalar chains as soon as it expects any gain,
# a small loop carry's included: then a recurrence waits for its whole state each step
# (bench W7, a 2-vector state: 17 ms at LLVM's default of 0, 10.8 at 1). A threshold of 1
# keeps the packs that pay (a row of math calls, such as the sin of a small carry; W3 is unchanged).
SLP_THRESHOLD = 1
# Instructions, at most, that the SLP vectorizer schedules together (LLVM's default:
# 100,000). A long loop step on a small carry is one block of unrolled elements whose
# lanes lie a chain's length apart, and scheduling across all of it made the vectorizer's
# time grow with the square of the step (issue 18's compile workload, a scan step of k
# operations on 4 floats: at k = 1000, 11.9 s to compile and 2.7 ms a call; with 2000,
# 5.1 s and 1.5 ms; k = 500: 76% of LLVM's time was the vectorizer).
SLP_BUDGET = 2000
_options_lock = renew_in_child(sys.modules[__name__], "_options_lock")


@contextmanager
def _slp_threshold(value: int):
    """The options are process-wide and llvmlite is shared (Numba may be compiling too):
    set for this pipeline only, then LLVM's defaults again."""
    with _options_lock:
        llvm.set_option("rune_jit", f"-slp-threshold={value}")
        llvm.set_option("rune_jit", f"-slp-schedule-budget={SLP_BUDGET}")
        try:
            yield
        finally:
            llvm.set_option("rune_jit", "-slp-threshold=0")
            llvm.set_option("rune_jit", "-slp-schedule-budget=100000")


def object_code(what: str, kind: str, module_ir: Callable[[], str]) -> bytes:
    """The object code of a module that depends on `what` alone (a native entry's
    signature, a front's shape), from the disk cache (entries of their own `kind`, a
    suffix), else compiled from `module_ir()` and stored there: a process that loads its
    programs from disk need not start LLVM for these either."""
    k = disk_cache.key(what, fingerprint())
    found = cached_code(k, kind)
    if found is not None:
        return found.payload
    obj = emit_object(optimize(module_ir()))
    cache_code(k, {}, obj, kind)
    return obj


def emit_object(mod: llvm.ModuleRef) -> bytes:
    with _lock:
        return target_machine().emit_object(mod)


def emit_assembly(mod: llvm.ModuleRef) -> str:
    with _lock:
        return target_machine().emit_assembly(mod)


# The libraries of our own code that programs call by address (own_code.py): modules with
# `needed_by(obj)` and `addresses(obj, defined, target, object_code, link)`.
# math_kernels.py adds itself when the backend imports it (its kernels' code reads this
# module).
OWN_CODE: list = [fft_kernels]


def link(obj: bytes, symbols: list[str], imports: dict[str, int] | None = None
         ) -> tuple[object, list[int]]:
    """Load object code; -> (what keeps the code mapped, each symbol's address).
    `imports` names addresses of this process the code refers to. A symbol the code
    needs and nobody defines raises here, not at call time; code for a target whose
    features this machine lacks, too (ValueError: target_cpu.check_runs_here)."""
    if config.cpu != "host" or config.cpu_features:  # the host's own code runs here
        target_cpu.check_runs_here(target(), target_features())
    imports = imports or {}
    math_libraries()
    if openblas.needed_by(obj):  # LAPACK's symbols: the library keeps them to itself
        imports = {**openblas.addresses(obj), **imports}
    if pocketfft.needed_by(obj):  # NumPy's FFT loops: their addresses, not symbols
        imports = {**pocketfft.addresses(obj), **imports}
    for library in OWN_CODE:  # our kernels: code of their own, loaded once
        if library.needed_by(obj):
            imports = {**library.addresses(obj, symbols, fingerprint(), object_code, link),
                       **imports}
    try:
        return elf_loader.load(obj, symbols, lambda name: imports.get(name) or
                               elf_loader.process_symbol(name) or llvm.address_of_symbol(name))
    except elf_loader.Unsupported:
        return lljit_link(obj, symbols, imports)


def lljit_link(obj: bytes, symbols: list[str], imports: dict[str, int]
               ) -> tuple[llvm.ResourceTracker, list[int]]:
    with _lock:
        builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
        for name, address in imports.items():
            builder.import_symbol(name, address)
        for symbol in symbols:
            builder.export_symbol(symbol)
        tracker = builder.link(engine(), f"rune{next(_names)}")
    return tracker, [tracker[s] for s in symbols]


if config.cpu != "host" or config.cpu_features:
    target()  # a bad setting fails as the backend loads, before anything is compiled
