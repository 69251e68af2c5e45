"""Registers and memory: constants, addresses, loads and stores of elements, and the
buffers of the equation being lowered."""

from __future__ import annotations

from typing import Any, Sequence

import llvmlite.ir as ir
import numpy as np

from ....ir import UNSIZED, Type
from . import arith, emit
from .emit import I64, reg_type
from .values import Lazy, Scalar, Value, strides


class Memory:
    """The Lowerer's (lower.py) constants, element loads and stores, and buffers."""

    def const(self, dtype: np.dtype, value: Any) -> ir.Constant:
        v = bool(value) if dtype.kind == "b" else value
        return arith.constant(reg_type(dtype, self.width), v)

    @staticmethod
    def i64(n: int) -> ir.Constant:
        return ir.Constant(I64, int(n))

    def splat(self, v: ir.Value) -> ir.Value:
        """A scalar register as one value for every lane of the block."""
        if self.width is None or isinstance(v.type, ir.VectorType):
            return v
        return arith.splat(self.b, v, self.width)

    def offset(self, shape: Sequence[int], idx: Sequence[ir.Value]) -> ir.Value:
        """The flat offset of index `idx`; its constant part folded here (unrolled
        elements index at constants: no instructions for LLVM to fold again)."""
        fixed, total = 0, None
        for i, s in zip(idx, strides(tuple(shape))):
            if isinstance(i, ir.Constant):
                fixed += i.constant * s
                continue
            term = i if s == 1 else self.b.mul(i, self.i64(s))
            total = term if total is None else self.b.add(total, term)
        if total is None:
            return self.i64(fixed)
        return total if fixed == 0 else self.b.add(total, self.i64(fixed))

    def address(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value) -> ir.Value:
        return self.b.gep(ptr, [offset], source_etype=emit.mem_type(dtype))

    def load_at(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value,
                width: int | None = None) -> ir.Value:
        """The element at `offset`, or the `width` elements from there as one vector."""
        v = self.b.load(self.address(ptr, dtype, offset), typ=emit.mem_type(dtype, width),
                        align=dtype.itemsize)
        if self.fn.access_group is not None:
            v.set_metadata("llvm.access.group", self.fn.access_group)
        # NumPy stores a bool as a byte; a register holds it as an i1
        return self.b.icmp_unsigned("!=", v, arith.const_like(v, 0)) if dtype.kind == "b" else v

    def store_at(self, ptr: ir.Value, dtype: np.dtype, offset: ir.Value, v: ir.Value,
                 own: bool = False) -> None:
        """Write `v`, one element or a vector of them, at `offset`. `own`: the store is
        the parallel loop's own (emit.Fn.while_loop): no other step touches `offset`."""
        if dtype.kind == "b":
            v = self.b.zext(v, emit.mem_type(dtype, arith.lanes(v.type)))
        st = self.b.store(v, self.address(ptr, dtype, offset), align=dtype.itemsize)
        if own and self.fn.access_group is not None:
            st.set_metadata("llvm.access.group", self.fn.access_group)

    def load(self, v: Value, idx: Sequence[ir.Value]) -> ir.Value:
        """Element `idx` of a value (a scalar operand broadcasts: any index reads it)."""
        if isinstance(v, Scalar):
            return self.splat(v.v)
        if isinstance(v, Lazy):
            return v.at(list(idx))
        if v.rows is not None:  # a tape: rows past those it holds are unspecified, and
            # not there at all (it grows with the steps taken): read its last row instead
            last = self.b.sub(v.rows, self.i64(1))
            idx = [arith.maximum(self.b, idx[0], last, False)] + list(idx[1:])
        return self.load_at(v.ptr, v.type.dtype, self.offset(v.type.shape, idx))

    def scalar(self, v: Value) -> ir.Value:
        if isinstance(v, Scalar):
            return self.splat(v.v)
        return self.load(v, [self.i64(0)] * v.type.ndim)

    def buffer(self, t: Type) -> ir.Value:
        if t.unsized:
            raise NotImplementedError(f"rune_jit: {t} cannot be held whole here: {UNSIZED}")
        return self.fn.buffer(t.nbytes)

    def claim(self, i: int) -> ir.Value | None:
        """The function's output buffer that output `i` of the equation being lowered is,
        unless it is none or already claimed."""
        dest = self.pending[i] if i < len(self.pending) else None
        if dest is not None:
            self.pending[i] = None
        return dest

    def read_whole(self, i: int) -> bool:
        """Whether output `i` of the equation being lowered is read whole (demand.py)."""
        return i < len(self.whole) and self.whole[i]

    def out_buffer(self, i: int, t: Type) -> ir.Value:
        """A buffer for output `i` of the equation being lowered: where the function's
        caller wants it, if it is one of the function's outputs (no copy at the end)."""
        dest = self.claim(i)
        return dest if dest is not None else self.buffer(t)
