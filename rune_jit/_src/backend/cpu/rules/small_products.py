"""Small products as LLVM vectors: code whose size grows with the outputs, not with the
terms (issue 42).

A product of at most `SMALL_ELEMENTS` outputs whose one contracted axis is at most
`ROW_BYTES` long (8 float64: a layer's `W @ h` at n = 8) is stored whole from a lazy
value whose elements are the old unrolled sums of products and whose `whole` (the form
the CPU backend's small elementwise chains take, lower.Lowerer.vector) computes every
output at once from operand rows loaded as vectors, in one of two forms:

- dot: each output the sum (in any order, as the product's loops sum it) of a row of A
  times a row of B, both contiguous along the contracted axis: `W @ h`;
- axpy: when one operand has a single free element and the other is laid out with its
  free axis contiguous, the output is a sum over the contraction of that operand's rows
  times one scalar each: `Wᵀ @ h` (a gradient's product through the transpose).

At 8 x 8, W @ h was 600 LLVM lines unrolled (8 outputs of 8 scalar products each); as
vectors it is 8 row loads, products and reductions. Rows of two AVX-512 registers (n = 16)
made LLVM's code generator 3 to 5 times slower on the product (1.4 to 2.3 s where the
loop of _few_outputs_dot takes 0.45, at K = 100 layers): longer ones take those loops.
"""

from __future__ import annotations

from typing import Callable, Sequence

import llvmlite.ir as ir

from ..codegen.lower import FEWEST_IN_VECTORS, SMALL_ELEMENTS, Lowerer
from ..codegen.values import Array, Value

ROW_BYTES = 64  # the longest contraction taken as one vector: one AVX-512 register
FUSED = ("contract",)


def whole_product(lw: Lowerer, a: Value, b: Value, out_size: int, free: tuple[int, int],
                  k: int, axes: Sequence[tuple[Sequence[int], Sequence[int]]]
                  ) -> Callable[[], ir.Value] | None:
    """The `whole` of a product of `out_size` outputs (a's `free[0]` rows times b's
    `free[1]`, contracting `k` terms, no batch), or None where neither form applies.
    `axes`: per operand, (its free axes, its contracted axes)."""
    if (lw.width is not None or not FEWEST_IN_VECTORS <= out_size <= SMALL_ELEMENTS
            or a.type.dtype.kind != "f" or not 1 < k * a.type.dtype.itemsize <= ROW_BYTES
            or any(len(c) != 1 for _, c in axes)):
        return None
    (m, n), (a_axes, b_axes) = free, axes
    a_rows, b_rows = _rows(lw, a, *a_axes), _rows(lw, b, *b_axes)
    if a_rows and b_rows:
        return lambda: _dot_form(lw, a_rows, b_rows, m, n)
    # an operand with one free element is its contraction: its flat vector
    for single, v, x, x_axes, width in ((n, b, a, a_axes, m), (m, a, b, b_axes, n)):
        columns = _columns(x, *x_axes)
        if single == 1 and columns is not None and lw.vectorizable(v):
            return lambda: _axpy_form(lw, columns, lw.vector(v), width, k)
    return None


def _rows(lw: Lowerer, x: Value, free: Sequence[int], contract: Sequence[int]
          ) -> Callable[[int], ir.Value] | None:
    """row(i) -> x's i-th free row along its contraction, as a vector, if x is in memory
    with the contraction contiguous (or x is one row, readable whole)."""
    shape = x.type.shape
    rows = 1
    for ax in free:
        rows *= shape[ax]
    if rows == 1 and lw.vectorizable(x):
        return lambda i: lw.vector(x)
    if not (isinstance(x, Array) and x.rows is None and _contiguous(shape, list(free) +
                                                                    list(contract))):
        return None
    k = shape[contract[0]]
    return lambda i: lw.load_at(x.ptr, x.type.dtype, lw.i64(i * k), k)


def _columns(x: Value, free: Sequence[int], contract: Sequence[int]) -> Array | None:
    """x if it is in memory as [contraction, free], its free axes contiguous."""
    if isinstance(x, Array) and x.rows is None and _contiguous(
            x.type.shape, list(contract) + list(free)):
        return x
    return None


def _contiguous(shape: Sequence[int], order: Sequence[int]) -> bool:
    """Axes `order` (of size > 1) run in memory order: a row-major array read in place."""
    real = [i for i in order if shape[i] != 1]
    return real == sorted(real)


def _dot_form(lw: Lowerer, a_row: Callable, b_row: Callable, m: int, n: int) -> ir.Value:
    b = lw.b
    bs = [b_row(j) for j in range(n)]
    out = ir.Constant(ir.VectorType(bs[0].type.element, m * n), ir.Undefined)
    for i in range(m):
        row = a_row(i)
        for j, col in enumerate(bs):
            out = b.insert_element(out, lw.hsum(b.fmul(row, col)), lw.i64(i * n + j))
    return out


def _axpy_form(lw: Lowerer, x: Array, v: ir.Value, width: int, k: int) -> ir.Value:
    """sum over t of x[t, :] * v[t]: k vector products of x's contiguous rows."""
    b = lw.b
    total = None
    for t in range(k):
        row = lw.load_at(x.ptr, x.type.dtype, lw.i64(t * width), width)
        term = b.fmul(row, lw.vsplat(b.extract_element(v, lw.i64(t)), width), flags=FUSED)
        total = term if total is None else b.fadd(total, term, flags=FUSED)
    return total
