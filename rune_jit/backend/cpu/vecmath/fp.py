"""Floating-point building blocks of the vector math: fused multiply-adds, Horner's
rule, and the error-free transformations (Knuth's 2Sum, Dekker's Fast2Sum, the exact
product by a fused multiply-add: Muller et al., "Handbook of Floating-Point Arithmetic",
2018, ch. 4) that carry a result as an unevaluated sum hi + lo.

Every function takes and returns registers of one float type, scalar or vector alike.
A fused multiply-add is rounded once: the same bits on every CPU (LLVM computes it in
libm where the CPU has no FMA instruction).
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir

from .. import arith as A


def fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    """x y + z, rounded once."""
    return A.intrinsic(b, "fma", x, y, z)


def horner(b: ir.IRBuilder, v: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    """The polynomial with `coefficients` (highest power first) at v."""
    acc = A.const_like(v, coefficients[0])
    for coef in coefficients[1:]:
        acc = fma(b, acc, v, A.const_like(v, coef))
    return acc


def two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(s, e) with s = x + y rounded and s + e = x + y exactly, whatever their sizes."""
    s = b.fadd(x, y)
    y_part = b.fsub(s, x)
    x_part = b.fsub(s, y_part)
    return s, b.fadd(b.fsub(x, x_part), b.fsub(y, y_part))


def fast_two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(s, e) with s + e = x + y exactly, where |x| >= |y| (or x is 0)."""
    s = b.fadd(x, y)
    return s, b.fsub(y, b.fsub(s, x))


def two_prod(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(p, e) with p = x y rounded and p + e = x y exactly (barring underflow)."""
    p = b.fmul(x, y)
    return p, fma(b, x, y, b.fneg(p))
