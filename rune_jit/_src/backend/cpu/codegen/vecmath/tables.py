"""Tables of constants read by an index per element (Tang's table-driven methods).

A table is an internal constant global of the module, defined once by name. A scalar
body reads it with a load, which the loop vectorizer widens to a gather (one
instruction for the register's lanes, `vgatherqpd` on x86-64 CPUs whose gathers LLVM
deems fast, Skylake and later; one load per lane on Haswell); a vector body (a lane
block, a small carry) loads lane by lane. Every path reads the same values: the same bits.

    >>> from rune_jit._src.backend.cpu.codegen.vecmath import outlined
    >>> 'table_exp_f64' in outlined.module_ir("rune_exp_kernel_v8f64")  # exp's kernel, apart
    True
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import F32, F64, I32, I64


def table(module: ir.Module, name: str, element: ir.Type,
          values: Sequence[float | int]) -> ir.GlobalVariable:
    """The module's constant array `name` of `values`, defined at the first use."""
    g = module.globals.get(name)
    if g is None:
        t = ir.ArrayType(element, len(values))
        g = ir.GlobalVariable(module, t, name)
        g.global_constant = True
        g.linkage = "internal"
        g.unnamed_addr = True
        g.initializer = ir.Constant(t, [ir.Constant(element, v) for v in values])
    return g


def lookup(b: ir.IRBuilder, g: ir.GlobalVariable, index: ir.Value) -> ir.Value:
    """g[index] for an i64 index, or a vector of them (then a vector of the elements, by
    one masked gather: a lane block reads its lanes' entries at once)."""
    count = A.lanes(index.type)
    if count is None:
        return b.load(b.gep(g, [ir.Constant(I64, 0), index], inbounds=True))
    element = g.value_type.element
    size = A.constant(index.type, _bytes(element))
    # llvmlite builds no GEP of a vector index: the addresses as integers instead
    base = A.splat(b, b.ptrtoint(g, I64), count)
    pointers = b.inttoptr(b.add(base, b.mul(index, size)), ir.VectorType(ir.PointerType(), count))
    result = ir.VectorType(element, count)
    gather = b.module.declare_intrinsic(
        f"llvm.masked.gather.v{count}{A.suffix(element)}.v{count}p0",
        fnty=ir.FunctionType(result, [pointers.type, I32, ir.VectorType(ir.IntType(1), count),
                                      result]))
    return b.call(gather, [pointers, ir.Constant(I32, 8),
                           ir.Constant(ir.VectorType(ir.IntType(1), count), [1] * count),
                           ir.Constant(result, ir.Undefined)])


def _bytes(t: ir.Type) -> int:
    return t.width // 8 if isinstance(t, ir.IntType) else {F64: 8, F32: 4}[t]
