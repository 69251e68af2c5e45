"""The CPU backend: programs lowered to LLVM IR with llvmlite and run as native code.

    lower.py        regions to LLVM: the lowering tables, fusion, materialization
    chunks.py       a long region in parts, each a function of its own (compile time)
    elementwise.py  elementwise primitives on registers (one row each)
    complex_pairs.py  complex values as pairs of reals, before lowering (complex_math.py:
                    the arithmetic of the pairs)
    views.py        broadcasts, slices, transposes... as lazy index maps; pad, concatenate
    gather.py       gathers (lazy) and scatters at positions given by index arrays
    reduce.py       reductions and prefix operations (cumulative sums...)
    sort.py         sorts, with libc's qsort and a comparator of the module's
    linalg.py       dot_general's kernels, LU solve
    lapack.py       decompositions (cholesky, lu, eigh, qr, svd, triangular solves): LAPACK
    callback.py     calls into Python (debug.print, debug.callback, pure_callback)
    interrupt.py    Ctrl-C: loops poll a signal count; sigint.py: the handler counting them
    control.py      cond, and the bodies of remat, root, stop_gradient
    loops.py        scan and iterate; carries.py, lane_loops.py, lane_blocks.py: their parts
    arith.py        NumPy's arithmetic on registers; mathlib.py: libm and libmvec calls;
                    module_functions.py: math of our own (tanh.py), once per module
    emit.py         IRBuilder helpers: functions, loops, buffers, failure exits
    values.py       how an IR value lives in compiled code: register, buffer or lazy
    pipeline.py     the passes a program goes through before it is lowered
    runtime.py      build, compile, cache and call programs; failures to Python errors
    llvm.py         one LLVM per process: target machine, optimization, linking
    elf_loader.py   object code into this process; entry.py: the native entry of calls
    pool.py         memory for large results
    threads.py      the pool of native threads parallel regions run on (pool_code.py: its
                    native code); outline.py: code as a function of its own;
                    parallel_maps.py: large maps in blocks of rows on the pool
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...ir import Region
from . import (control, elementwise, entry, gather, linalg, llvm, loops,  # noqa: F401
               reduce, runtime, sort, views)
from . import callback  # noqa: F401  (calls into Python)
from . import complex_pairs
from . import lapack  # noqa: F401  (decompositions: LAPACK calls)
from . import parallel_maps  # noqa: F401  (large maps on the pool's threads)
from . import chunks  # noqa: F401  (long regions in parts)
from .pipeline import STAGES, before_lowering


class CpuBackend:
    name = "native"
    passes = STAGES

    def fingerprint(self) -> str:
        return llvm.fingerprint()

    def compile(self, region: Region) -> runtime.Executable:
        return runtime.prepare(region)

    def run_loop(self, prim: Any, interpret: Callable, args: Sequence[Any],
                 params: dict) -> list:
        return runtime.run_eqn(prim, interpret, args, params)

    def load(self, record: dict, payload: bytes, constants: list
             ) -> runtime.Executable | None:
        return runtime.load(record, payload, constants)

    def lower(self, region: Region) -> "Lowered":
        from ...passes.constants import lift_constants

        if complex_pairs.holds_complex(region):  # as compiled: complex values in pairs
            region = complex_pairs.to_pairs(region)
        final = before_lowering(lift_constants(region)[0])
        return Lowered(final, runtime.build(final))


def _instructions(module) -> int:
    return sum(1 for f in module.functions for b in f.blocks for _ in b.instructions)


class Lowered:
    """A program's stages as text: `.ir` (rune_jit IR), `.llvm_ir` (and its native
    entry's, `.entry_llvm_ir`), `.asm`."""

    def __init__(self, region: Region, built: runtime.Built):
        self.region, self.built = region, built

    @property
    def ir(self) -> str:
        """The program as compiled: after the passes that run before lowering."""
        return str(self.region)

    @property
    def llvm_ir(self) -> str:
        return self.built.llvm_ir

    @property
    def entry_llvm_ir(self) -> str:
        """The LLVM IR of the native entry of the program's signature, a module of its own
        (entry.py), or "" if it has none."""
        meta = self.built.meta
        return entry.module_ir(meta.in_types, meta.out_types) if meta.entry else ""

    def cost(self) -> dict:
        """What the program costs to compile: rune_jit equations, LLVM instructions
        (before and after LLVM's optimization); and to run: the bytes of the temporaries a
        call stores (`scratch_bytes`, not counting buffers of 64 bytes or less).

        >>> cost = rune.jit(lambda x: rnp.sin(x) * 2.0).lower(np.ones(3)).cost()
        >>> cost["equations"], cost["llvm_instructions"] > 0, cost["scratch_bytes"]
        (2, True, 0)
        """
        from ...ir import count_eqns

        optimized = llvm.optimize(self.built.llvm_ir)
        return {"equations": count_eqns(self.region),
                "llvm_instructions": _instructions(llvm.llvm.parse_assembly(self.built.llvm_ir)),
                "llvm_instructions_optimized": _instructions(optimized),
                "scratch_bytes": self.built.arena_bytes}

    @property
    def asm(self) -> str:
        return llvm.emit_assembly(llvm.optimize(self.built.llvm_ir))
