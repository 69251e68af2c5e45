"""Tables of constants read by an index per element (Tang's table-driven methods).

A table is an internal constant global of the module, defined once by name. A scalar
body reads it with a load, which the loop vectorizer widens to a gather (one
instruction for the register's lanes, `vgatherqpd` on x86-64 CPUs whose gathers LLVM
deems fast, Skylake and later; one load per lane on Haswell); a vector body (a lane
block, a small carry) loads lane by lane. Every path reads the same values: the same bits.

    >>> x = np.linspace(-3, 3, 1000)
    >>> text = rune.jit(rnp.exp).lower(x).llvm_ir
    >>> 'table_exp_f64' in text
    True
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir

from .. import arith as A
from ..emit import I32, I64


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
    """g[index] for an i64 index, or a vector of them (then a vector of the elements)."""
    zero = ir.Constant(I64, 0)
    count = A.lanes(index.type)
    if count is None:
        return b.load(b.gep(g, [zero, index], inbounds=True))
    out = ir.Constant(ir.VectorType(g.value_type.element, count), ir.Undefined)
    for lane in range(count):
        i = b.extract_element(index, ir.Constant(I32, lane))
        out = b.insert_element(out, b.load(b.gep(g, [zero, i], inbounds=True)),
                               ir.Constant(I32, lane))
    return out
