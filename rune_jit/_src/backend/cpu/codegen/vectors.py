"""Values as LLVM vectors: a small value whole (issue 42), and explicit vectors of a
register's width."""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir
import numpy as np

from ....ir import Type
from . import arith, emit
from .values import Array, Lazy, Scalar, Value

# up to a 4 x 4 matrix: unrolled in a Kalman filter's step, its 4 x 4 products and
# solve stay in registers (bench KF: 31 -> 17 ms on znver4; 8, one vector of float64,
# kept them in memory; 32 was no faster than 16)
SMALL_ELEMENTS = 16
# fewer elements than this stay one scalar register each: their code is short anyway, and
# bench W7's 2-vector carry (a stack of two scalars, read back whole) ran 14 -> 20 ms as
# vectors
FEWEST_IN_VECTORS = 4


class Vectors:
    """The Lowerer's (lower.py) vectors: small values whole, splats and sums of lanes."""

    def vectorizable(self, v: Value) -> bool:
        """Whether `vector(v)` can compute `v` (read with operands of its shape)."""
        if self.width is not None or not FEWEST_IN_VECTORS <= v.type.size <= SMALL_ELEMENTS:
            return False  # (in a lane block each register is already a vector of lanes)
        if isinstance(v, Array):
            return v.rows is None
        return isinstance(v, Lazy) and v.whole is not None

    def vector(self, v: Value) -> ir.Value:
        """All of a small value (`vectorizable`) as one LLVM vector, its elements in
        row-major order: code whose size does not grow with the element count (LLVM
        legalises `<16 x double>` to the target's registers)."""
        if isinstance(v, Array):
            return self.load_at(v.ptr, v.type.dtype, self.i64(0), v.type.size)
        return v.whole()

    def operand_vector(self, v: Value, size: int) -> ir.Value:
        """An elementwise operand of `size` elements as a vector: a scalar in every lane."""
        return self.vsplat(v.v, size) if isinstance(v, Scalar) else self.vector(v)

    def operands_vectorizable(self, vals: Sequence[Value], out: Type) -> bool:
        return self.width is None and FEWEST_IN_VECTORS <= out.size <= SMALL_ELEMENTS and all(
            isinstance(v, Scalar) or (v.type.shape == out.shape and self.vectorizable(v))
            for v in vals)

    def lanes_for(self, dtype: np.dtype) -> int:
        """How many elements of `dtype` one vector register holds here."""
        from ..runtime.llvm import vector_bits

        return vector_bits() // (8 * dtype.itemsize)

    def vsplat(self, v: ir.Value, width: int) -> ir.Value:
        return self.with_width(width).splat(v)

    def hsum(self, v: ir.Value) -> ir.Value:
        """The sum of a vector's elements (in any order)."""
        zero = ir.Constant(v.type.element, 0.0)
        fn = emit.declare(self.fn.module, f"llvm.vector.reduce.fadd.{arith.suffix(v.type)}",
                          v.type.element, [v.type.element, v.type])
        return self.b.call(fn, [zero, v], fastmath=("reassoc",))
