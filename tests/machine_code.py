"""What vector code and calls look like in the assembly of this machine (x86-64 or
aarch64), for tests that read `lowered.asm`."""

import platform

_X86 = platform.machine() in ("x86_64", "AMD64")
# a fused multiply-add on a vector register: AVX2/AVX-512 (ymm, zmm), or Advanced SIMD
# (any operand: LLVM puts a broadcast constant first, `vfmadd213pd (%rax){1to4}, %ymm1`)
VECTOR_FMA = r"\bvfn?m(?:add|sub)\w+\s[^\n]*%[yz]mm" if _X86 else r"\bfml[as]\s+v\d+\.(?:2d|4s)"
# an arithmetic instruction on a vector of float64
VECTOR_F64 = r"\bv\w+pd\s+%[yz]mm" if _X86 else r"\bf\w+\s+v\d+\.2d"
# a call, capturing its target
CALL = r"\bcall\w*\s+([\w.]+)" if _X86 else r"\bbl\s+([\w.]+)"
