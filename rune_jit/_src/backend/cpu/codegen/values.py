"""How an IR value lives in compiled code.

- `Scalar`: a 0-d value in a register (under lane blocks, a vector of lanes);
- `Array`: a contiguous row-major buffer at `ptr`;
- `Lazy`: an expression computing any element from its index (and, when small,
  often all of them as one LLVM vector), not stored anywhere. Elementwise
  operations, broadcasts, transposes and slices make lazy values from lazy
  values, so a chain of them becomes one loop nest when something finally
  needs the elements in memory (fusion).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import llvmlite.ir as ir

from ....ir import Type


@dataclass(eq=False)
class Scalar:
    type: Type
    v: ir.Value


@dataclass(eq=False)
class Array:
    type: Type
    ptr: ir.Value
    rows: ir.Value | None = None  # a tape holds only this many leading rows; the rest is unset


@dataclass(eq=False)
class Lazy:
    type: Type
    at: Callable[[list[ir.Value]], ir.Value]  # element at an index (one i64 per axis)
    cost: int  # arithmetic it repeats when read twice: 0 for pure index remapping
    cheap: bool = False  # reads no memory at all (a broadcast scalar, an iota)
    # a transpose of an array in memory: (the array, the permutation), which a product
    # reads in place (linalg.py) instead of through `at`
    transposed: tuple[Array, tuple[int, ...]] | None = None
    # all of a small value as one LLVM vector, its elements in row-major order
    # (Lowerer.vector), where the lowering that made it can compute it so: None if not
    whole: Callable[[], ir.Value] | None = None
    # reads a value that a broadcast repeats along the last axis (one per row, as a
    # row's max in x - max(x, -1)): stored row by row (Storing.store)
    rowwise: bool = False


Value = Scalar | Array | Lazy


def strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return out[::-1]


def row_bytes(t: Type) -> int:
    """The bytes of one row (index along axis 0) of a value of type `t`."""
    return t.with_shape(t.shape[1:]).nbytes


def cost(v: Value) -> int:
    return v.cost if isinstance(v, Lazy) else 0


def rowwise(vals, out: Type) -> bool:
    """Whether a value of type `out` made elementwise from `vals` reads one repeated
    along its last axis (Lazy.rowwise)."""
    return any(isinstance(v, Lazy) and v.rowwise and v.type.shape == out.shape for v in vals)
