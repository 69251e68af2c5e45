"""The CPU backend: programs lowered to LLVM IR with llvmlite and run as native code.

Three wings (docs/design.md maps them):

    rules/     each primitive family's lowering rules, a row of lower.py's tables each:
               elementwise, views, gather, reduce, sort, linalg (with small_lu,
               small_products, blas, lapack), fft, control, loops (lane_loops, lane_blocks),
               callback, checks (rune_jit.check: a failure status, and the call
               replayed in the interpreter to name it), parallel_maps
    codegen/   how a region becomes LLVM IR: the pipeline of passes before lowering
               (pipeline, fission), the region walk and fusion (lower, with the
               Lowerer's failures, memory, vectors and storing; values, demand,
               reuse, chunks, outline), loops' parts (carries), IRBuilder helpers
               (emit), NumPy's arithmetic on registers (arith) and the math library
               (mathlib, module_functions, tanh, vecmath/); the FFT kernels (stockham)
    runtime/   programs built, compiled, cached and called (runtime/__init__.py), LLVM
               set up once (llvm, elf_loader), native entries (entry, front), threads
               and memory (threads, pool_code, pool), Ctrl-C (interrupt, sigint),
               OpenBLAS loaded (openblas), NumPy's FFT loops found (pocketfft), our FFT
               kernels compiled once (fft_kernels)
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ...ir import Region
from . import runtime
from .codegen import chunks  # noqa: F401  (long regions in parts)
from .codegen import complex_pairs
from .codegen.pipeline import STAGES, before_lowering
# the rules fill lower.py's tables as they are imported
from .rules import (callback, control, elementwise, fft, gather, lapack,  # noqa: F401
                    lapack_complex, linalg, loops, parallel_maps, reduce, sort, views)
from .runtime import entry, llvm, math_kernels  # noqa: F401 (linked by address)
from ..mlir import MlirStages


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

        paired = complex_pairs.holds_complex(region)
        if paired:  # as compiled: complex values in pairs, interleaved at the boundary
            region = complex_pairs.at_boundary(region)
        lifted, constants = lift_constants(region)
        return Lowered(before_lowering(lifted), constants, paired)


def _instructions(module) -> int:
    return sum(1 for f in module.functions for b in f.blocks for _ in b.instructions)


class Lowered(MlirStages):
    """A program's stages as text: `.ir` (rune_jit IR), `.mlir` (upstream MLIR dialects),
    `.llvm_ir` (and its native entry's, `.entry_llvm_ir`), `.asm`; `as_text(dialect)`."""

    def __init__(self, region: Region, constants: list, paired: bool = False):
        self.region, self.constants, self.paired = region, constants, paired

    @functools.cached_property
    def built(self) -> runtime.Built:
        """The LLVM IR, built when a stage asks for it: `.mlir` and `.ir` never do."""
        return runtime.build(self.region)

    @property
    def mlir(self) -> str:
        if self.paired:  # the pairs are this backend's: MLIR would show a signature not the user's
            raise NotImplementedError("no MLIR form for complex values yet (docs/mlir.md): "
                                      "the program holds complex64 or complex128 values")
        return super().mlir

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
