"""Outlining: part of a program as an LLVM function of its own, reading the caller's values.

`outline` makes an internal function `i64 f(ptr ctx, i64 first, i64 end, ptr scratch)`
in the caller's module, with the same failure convention as the program (0, or the
status of a failure site). The values the code reads from the caller (registers,
buffers: values.py's Scalar and Array) are stored into a context struct by the
caller and loaded again at the function's entry, so the code is written as if it ran
in the caller, with the new function's own Lowerer. A parallel region is such a
function run on several threads (threads.py); the function has no scratch memory of
its own beyond its stack (its arena must fit there, emit.STACK_LIMIT).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence, Union

import llvmlite.ir as ir

from .emit import I64, PTR, Fn
from .lower import Lowerer
from .values import Array, Scalar

Captured = Union[Scalar, Array, ir.Value]
SLOT = 8  # bytes of the context per register (a pointer, an int64 or a double at most)


class Outlined(NamedTuple):
    function: ir.Function
    ctx: ir.Value  # the caller's context, filled where `outline` was called


def _registers(v: Captured) -> list[ir.Value]:
    if isinstance(v, Scalar):
        return [v.v]
    if isinstance(v, Array):
        return [v.ptr] + ([v.rows] if v.rows is not None else [])
    if isinstance(v, ir.Value):
        return [v]
    raise TypeError(f"rune_jit: cannot pass {type(v).__name__} to outlined code "
                    "(materialize it first)")


def _rebuilt(v: Captured, regs: list[ir.Value]) -> Captured:
    if isinstance(v, Scalar):
        return Scalar(v.type, regs[0])
    if isinstance(v, Array):
        return Array(v.type, regs[0], regs[1] if v.rows is not None else None)
    return regs[0]


def outline(lw: Lowerer, name: str, captured: Sequence[Captured],
            body: Callable[[Lowerer, list, ir.Value, ir.Value], None]) -> Outlined:
    """A new function `name` whose code `body(inner, values, first, end)` emits with its
    own Lowerer `inner`, where `values` are `captured` (the caller's) as the function
    sees them. The caller's SIGINT count at its start goes along (interrupt.py)."""
    groups = [_registers(v) for v in captured]
    regs = [r for g in groups for r in g] + [lw.fn.signals_at_start()]
    if any(isinstance(r.type, ir.VectorType) for r in regs):
        raise TypeError("rune_jit: outlined code reads scalar registers and buffers only")
    ctx = lw.fn.buffer(SLOT * len(regs))  # one slot a register: none is wider
    for i, r in enumerate(regs):
        lw.b.store(r, lw.b.gep(ctx, [ir.Constant(I64, i)], source_etype=I64))
    inner = Fn(lw.fn.module, name, [PTR, I64, I64])
    inner.func.linkage = "internal"
    arg, first, end = inner.func.args[:3]
    at = inner.at_entry
    loaded = [at.load(at.gep(arg, [ir.Constant(I64, i)], source_etype=I64), typ=r.type)
              for i, r in enumerate(regs)]
    inner.inherit_signals(loaded.pop())
    values, k = [], 0
    for v, g in zip(captured, groups):
        values.append(_rebuilt(v, loaded[k:k + len(g)]))
        k += len(g)
    body(Lowerer(inner, lw.errors), values, first, end)
    inner.finish()
    if inner.scratch_bytes:
        raise NotImplementedError(f"rune_jit: outlined code needs {inner.scratch_bytes} "
                                  "bytes of scratch memory, more than its stack holds")
    return Outlined(inner.func, ctx)
