"""Storing values: loops over a shape's elements (unrolled when small, flat when the last
axis is short, by rows when that short axis repeats a value), and a lazy value written to
memory, where fusion ends."""

from __future__ import annotations

import math
from typing import Callable, Sequence

import llvmlite.ir as ir
import numpy as np

from .values import Array, Lazy, Scalar, Value, cost, row_bytes
from .vectors import SMALL_ELEMENTS

UNROLLED_OPERATIONS = 256  # at most this many operations are unrolled to store a value
SHORT_AXIS = 16  # a value stored whose last axis is shorter is stored in one flat loop
ROW_AXIS = 8  # ... or, if it repeats a value along a last axis this short, row by row
VECTOR_BYTES = 32  # the vectors LLVM's loop vectorizer makes here (AVX2's and AVX-512's)
# Other ways than one loop nest on this thread to store a lazy value, tried in order:
# `store(lw, value, dest) -> whether it did` (parallel_maps.py: the pool's threads)
STORES: list[Callable] = []


class Storing:
    """The Lowerer's (lower.py) loops over elements and stores of values."""

    def fold(self, shape: Sequence[int], carried: Sequence[ir.Value],
             body: Callable[[list[ir.Value], list[ir.Value]], Sequence[ir.Value]],
             small: int = SMALL_ELEMENTS, flat: bool = False, parallel: bool = False,
             rows: bool = False) -> list[ir.Value]:
        """carried = body(idx, carried) for every index of `shape`, in order; -> the final
        registers. A shape of at most `small` elements is unrolled: at constant indices,
        its buffers stay in registers (see emit.SMALL_BYTES). `flat`: one loop over all
        the elements when the last axis is short (see `_flat`). `parallel`: the loops
        are (emit.Fn.while_loop). `rows`: with `flat`, one loop over the rows instead,
        the last axis unrolled in it (see `_rows`)."""
        if math.prod(shape) <= small:
            vals = list(carried)
            for idx in np.ndindex(*shape):
                vals = list(body([self.i64(i) for i in idx], vals))
            return vals
        if flat and rows and len(shape) > 1 and shape[-1] <= ROW_AXIS:
            return self._rows(shape, carried, body, parallel)
        if flat and len(shape) > 1 and shape[-1] < SHORT_AXIS:
            return self._flat(shape, carried, body, parallel)

        def level(d: int, idx: list[ir.Value], vals: list[ir.Value]) -> list[ir.Value]:
            if d == len(shape):
                return list(body(idx, vals))
            return self.fn.loop(self.i64(0), self.i64(shape[d]), 1, vals,
                                lambda t, v: level(d + 1, idx + [t], v), parallel)

        return level(0, [], list(carried))

    def _flat(self, shape: Sequence[int], carried: Sequence[ir.Value],
              body: Callable[[list[ir.Value], list[ir.Value]], Sequence[ir.Value]],
              parallel: bool) -> list[ir.Value]:
        """`fold` as one loop over the flat index, each axis' index its quotient and
        remainder by constants: LLVM vectorizes that loop (a (300, 5) map runs in vectors,
        its calls to exp too), where a loop of 5 inside one of 300 it would not."""
        def at(t: ir.Value, vals: list[ir.Value]) -> list[ir.Value]:
            return list(body(self._unflat(shape, t), vals))

        return self.fn.loop(self.i64(0), self.i64(math.prod(shape)), 1, list(carried), at,
                            parallel)

    def _rows(self, shape: Sequence[int], carried: Sequence[ir.Value],
              body: Callable[[list[ir.Value], list[ir.Value]], Sequence[ir.Value]],
              parallel: bool) -> list[ir.Value]:
        """`fold` as one loop over the rows, the short last axis unrolled in it: LLVM
        vectorizes that loop across rows, so that a value repeated along the last axis
        (x[i, j] - m[i]) is read as m[i..i+3], where the flat loop (`_flat`) reads it at
        quotients of the flat index, a gather a vector."""
        def at(t: ir.Value, vals: list[ir.Value]) -> list[ir.Value]:
            lead = self._unflat(shape[:-1], t)
            for j in range(shape[-1]):
                vals = list(body(lead + [self.i64(j)], vals))
            return vals

        return self.fn.loop(self.i64(0), self.i64(math.prod(shape[:-1])), 1, list(carried), at,
                            parallel)

    def _unflat(self, shape: Sequence[int], t: ir.Value) -> list[ir.Value]:
        """The index of flat position `t` in `shape`: quotients and remainders by
        constants."""
        b, idx = self.b, []
        for n in reversed(shape[1:]):
            idx.append(b.urem(t, self.i64(n)))
            t = b.udiv(t, self.i64(n))
        return [t] + idx[::-1]

    def elements(self, shape: Sequence[int], body: Callable[[list[ir.Value]], None]) -> None:
        """body(idx), which reads or writes one element, for every index of `shape`."""
        self.fold(shape, [], lambda idx, _: body(idx) or [])

    def loop_nest(self, shape: Sequence[int], body: Callable[[list[ir.Value]], None],
                  parallel: bool = False) -> None:
        """body(idx) for every index of `shape`, as loops however small the shape (a
        kernel's tiles: unrolled, they would only make the code bigger)."""
        self.fold(shape, [], lambda idx, _: body(idx) or [], small=0, parallel=parallel)

    def store(self, v: Value, dest: ir.Value) -> None:
        """Write all of `v` to the buffer at `dest`."""
        t = v.type
        if isinstance(v, Array) and v.rows is not None:  # only the rows a tape holds
            self.fn.memcpy(dest, v.ptr, self.b.mul(v.rows, self.i64(row_bytes(t))))
        elif isinstance(v, Array):
            if v.ptr is not dest:
                self.fn.memcpy(dest, v.ptr, t.nbytes)
        elif isinstance(v, Scalar) and t.shape == ():
            self.store_at(dest, t.dtype, self.i64(0), v.v)
        elif isinstance(v, Lazy) and self.vectorizable(v):
            self.store_at(dest, t.dtype, self.i64(0), self.vector(v), own=True)
        elif not (isinstance(v, Lazy) and any(store(self, v, dest) for store in STORES)):
            # a long chain over a few elements is a loop: unrolled, its code would be
            # that many times longer, for LLVM's vectorizer to fold back together
            small = SMALL_ELEMENTS if cost(v) * t.size <= UNROLLED_OPERATIONS else 0
            self.fold(t.shape, [], lambda idx, _: self.store_element(v, dest, idx) or [],
                      small, flat=t.size > small, parallel=True, rows=_by_rows(v))

    def store_element(self, v: Value, dest: ir.Value, idx: Sequence[ir.Value]) -> None:
        """Element `idx` of `v` to the buffer at `dest`, in a parallel loop over the
        elements: no element of `v` reads what another writes (`dest` is a buffer of its
        own, or v's operand's in place, element for element: reuse.py)."""
        self.store_at(dest, v.type.dtype, self.offset(v.type.shape, idx), self.load(v, idx),
                      own=True)

    def row_major(self, v: Value) -> ir.Value:
        """The address of v's elements in row-major memory: its own (an array not read
        through a tape's rows), else a copy in a buffer of this call (a library reads it)."""
        return v.ptr if isinstance(v, Array) and v.rows is None else self.materialize(
            v, self.buffer(v.type)).ptr

    def materialize(self, v: Value, dest: ir.Value | None = None) -> Array:
        """`v` in memory (a buffer of this call unless `dest` is given)."""
        if isinstance(v, Array) and dest is None:
            return v
        dest = dest if dest is not None else self.buffer(v.type)
        self.store(v, dest)
        return Array(v.type, dest)

    def settle(self, v: Value) -> Value:
        """A 0-d value in a register; any other value as it is."""
        if v.type.shape == () and not isinstance(v, Scalar):
            return Scalar(v.type, self.scalar(v))
        return v


def _by_rows(v: Value) -> bool:
    """Whether to store `v` row by row (Storing._rows): it repeats a value along its last
    axis, and its rows do not fill whole vectors (when they do, LLVM reads the repeated
    value of a vector's row once in the flat loop, which is then the faster)."""
    t = v.type
    return (isinstance(v, Lazy) and v.rowwise and t.ndim > 1
            and t.shape[-1] * t.dtype.itemsize % VECTOR_BYTES != 0)
