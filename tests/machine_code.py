"""What vector code and calls look like in the assembly of this machine (x86-64 or
aarch64), for tests that read `lowered.asm`."""

import platform
import re

_X86 = platform.machine() in ("x86_64", "AMD64")
# a fused multiply-add on a vector register: AVX2/AVX-512 (ymm, zmm), or Advanced SIMD
VECTOR_FMA = r"vfmadd\w+\s+%[yz]mm" if _X86 else r"\bfml[as]\s+v\d+\.(?:2d|4s)"
# an arithmetic instruction on a vector of float64
VECTOR_F64 = r"\bv\w+pd\s+%[yz]mm" if _X86 else r"\bf\w+\s+v\d+\.2d"
# a call, capturing its target
CALL = r"\bcall\w*\s+([\w.]+)" if _X86 else r"\bbl\s+([\w.]+)"


def kernel_apart(lowered, name: str) -> str:
    """The machine code of the vector kernel of `name` compiled apart (codegen/vecmath/
    outlined.py) that `lowered`'s loop calls once per vector. Asserts that the loop calls
    one vector kernel, declared, not defined, and otherwise only the scalar kernel (its
    remainder): no call per element of anything else."""
    from rune_jit._src.backend.cpu.codegen.vecmath import outlined
    from rune_jit._src.backend.cpu.runtime import llvm

    (symbol,) = set(re.findall(rf"rune_{name}_kernel\w*_v\d+f64", lowered.asm))
    assert re.search(rf'declare <\d+ x double> @"{symbol}"', lowered.llvm_ir), symbol
    scalar = re.sub(r"_v\d+f64$", "_f64", symbol)
    assert set(re.findall(CALL, lowered.asm)) <= {symbol, scalar}, set(re.findall(CALL, lowered.asm))
    return llvm.emit_assembly(llvm.optimize(outlined.module_ir(symbol)))
