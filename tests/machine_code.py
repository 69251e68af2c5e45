"""What vector code and calls look like in the assembly of this machine (x86-64 or
aarch64), for tests that read `lowered.asm`."""

import platform
import re

import numpy as np

_X86 = platform.machine() in ("x86_64", "AMD64")
# a fused multiply-add on a vector register: AVX2/AVX-512 (ymm, zmm), or Advanced SIMD
# (any operand: LLVM puts a broadcast constant first, `vfmadd213pd (%rax){1to4}, %ymm1`)
VECTOR_FMA = r"\bvfn?m(?:add|sub)\w+\s[^\n]*%[yz]mm" if _X86 else r"\bfml[as]\s+v\d+\.(?:2d|4s)"
# an arithmetic instruction on a vector of float64
VECTOR_F64 = r"\bv\w+pd\s+%[yz]mm" if _X86 else r"\bf\w+\s+v\d+\.2d"
# a call, capturing its target
CALL = r"\bcall\w*\s+([\w.]+)" if _X86 else r"\bbl\s+([\w.]+)"
# the large code model's calls of other modules' functions: the address moved into a
# register (`movabsq $f, %rax`), then `callq *%rax`, which CALL does not see
ADDRESS = r"\bmovabsq\s+\$([A-Za-z_][\w.]*)," if _X86 else r"\badrp?\s+x\d+,\s*:?\w*:?([A-Za-z_][\w.]*)"
# a vector instruction on float registers (of float64 or float32), operands in any order
VECTOR_ANY = r"\bv\w+p[sd]\s+[^\n]*%[yz]mm" if _X86 else r"\bf\w+\s+v\d+\.(?:2d|4s)"


def called(asm: str) -> set:
    """The functions `asm` calls or takes the address of (CALL and ADDRESS), but the
    runtime's (`rune.parallel_for`, `rune.interrupts`...: once per block of a loop)."""
    names = set(re.findall(CALL, asm)) | set(re.findall(ADDRESS, asm))
    return {name for name in names if not name.startswith("rune.")}


def kernel_apart(lowered, name: str) -> str:
    """The machine code of the widest vector kernel of `name` compiled apart (codegen/
    vecmath/outlined.py) that `lowered`'s loop calls once per vector. Asserts that the
    loop calls a vector kernel, declared, not defined, and otherwise only kernels of
    `name` (narrower vectors or the scalar one for its remainder): no call per element."""
    from rune_jit._src.backend.cpu.codegen.vecmath import outlined
    from rune_jit._src.backend.cpu.runtime import llvm

    vectors = set(re.findall(rf"rune_{name}_kernel\w*_v\d+f64", lowered.asm))
    assert vectors, f"no vector kernel of {name} is called"
    for symbol in vectors:
        assert re.search(rf'declare <\d+ x double> @"{symbol}"', lowered.llvm_ir), symbol
    calls = called(lowered.asm)
    assert all(re.fullmatch(rf"rune_{name}_kernel\w*_(v\d+)?f64", c) for c in calls), calls
    widest = max(vectors, key=lambda s: int(re.search(r"_v(\d+)f64$", s).group(1)))
    return llvm.emit_assembly(llvm.optimize(outlined.module_ir(widest)))


def vector_code(lowered, name: str, dtype) -> str:
    """The machine code that computes `name`'s elements in `lowered`'s loop over `dtype`:
    its kernel's where the registry (outlined.KERNELS) compiles it apart (`kernel_apart`),
    else the program's, which then calls nothing (the function inlined)."""
    from rune_jit._src.backend.cpu.codegen.vecmath import outlined

    if outlined.apart_here(name + ("_kernel" if dtype == np.float64 else "_kernel_short")):
        return kernel_apart(lowered, name)
    assert not called(lowered.asm), (name, dtype)
    return lowered.asm
