"""The compiler: lowers the typed IR to LLVM IR with llvmlite, and runs it as native code.

llvm.py      one JIT engine per process: target machine, optimization, linking
emit.py      IRBuilder helpers: types, constants, loops, allocation, masks
values.py    how an IR value lives in compiled code: register, buffer or lazy expression
lower.py     regions to LLVM functions: fusion, materialization, each primitive's `lower`
runtime.py   the calling convention, status codes to Python errors
cache.py     object code on disk
"""
