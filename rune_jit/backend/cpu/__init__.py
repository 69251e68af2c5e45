"""The CPU backend: programs lowered to LLVM IR with llvmlite and run as native code.

    lower.py        regions to LLVM: the lowering tables, fusion, materialization
    elementwise.py  elementwise primitives on registers (one row each)
    views.py        broadcasts, slices, transposes... as lazy index maps; pad, concatenate
    reduce.py       reductions
    linalg.py       dot_general's kernels, LU solve
    control.py      cond, and the bodies of remat, root, stop_gradient
    loops.py        scan and iterate; carries.py, lane_loops.py, lane_blocks.py: their parts
    arith.py        NumPy's arithmetic on registers; mathlib.py: libm and libmvec calls
    emit.py         IRBuilder helpers: functions, loops, buffers, failure exits
    values.py       how an IR value lives in compiled code: register, buffer or lazy
    pipeline.py     the passes a program goes through before it is lowered
    runtime.py      build, compile, cache and call programs; failures to Python errors
    llvm.py         one LLVM per process: target machine, optimization, linking
    elf_loader.py   object code into this process; entry.py: the native entry of calls
    pool.py         memory for large results
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...ir import Region
from . import control, elementwise, linalg, llvm, loops, reduce, runtime, views  # noqa: F401
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
        return runtime.run_eqn(prim, args, params)

    def load(self, record: dict, payload: bytes, constants: list
             ) -> runtime.Executable | None:
        return runtime.load(record, payload, constants)

    def lower(self, region: Region) -> "Lowered":
        from ...passes.constants import lift_constants

        final = before_lowering(lift_constants(region)[0])
        return Lowered(final, runtime.build(final))


class Lowered:
    """A program's stages as text: `.ir` (rune_jit IR), `.llvm_ir`, `.asm`."""

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
    def asm(self) -> str:
        return llvm.emit_assembly(llvm.optimize(self.built.llvm_ir))
