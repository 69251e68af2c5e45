"""Outlining: part of a program as an LLVM function of its own, reading the caller's values.

`outline(lw, name, body)` makes an internal function `i64 f(ptr ctx, i64 first, i64 end,
ptr scratch)` in the caller's module, with the program's failure convention (0, or
the status of a failure site), and has `body(first, end)` emit its code with the
caller's own Lowerer, pointed at the new function while it runs: the code is written
as if it ran in the caller (lazy values included), and whatever it reads of the
caller's (registers, buffer addresses: any SSA value of the caller) is then found in
the new function's instructions, stored into a context by the caller, and loaded
again at the new function's entry. A parallel region is such a function run on
several threads (threads.py). The function's own buffers are its own (each thread's):
on its stack, or from malloc if they are too big for it (emit.STACK_LIMIT).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, NamedTuple

import llvmlite.ir as ir
from llvmlite.ir import instructions as ins

from .emit import I8, I64, PTR, Fn
from .lower import Lowerer


class Outlined(NamedTuple):
    function: ir.Function
    ctx: ir.Value  # in the caller: the context, filled where `outline` was called


def outline(lw: Lowerer, name: str, body: Callable[[ir.Value, ir.Value], None]) -> Outlined:
    """A new function `name` whose code `body(first, end)` emits through `lw` (see the
    module's docstring); -> the function and the caller's filled context."""
    outer = lw.fn
    inner = Fn(outer.module, name, [PTR, I64, I64])
    inner.func.linkage = "internal"
    inner.own_arena = True  # no caller passes it scratch memory
    inner.inherit_signals(outer.signals_at_start())
    with _emitting_into(lw, inner):
        body(*inner.func.args[1:3])
    inner.finish()
    return Outlined(inner.func, _capture(lw, inner))


@contextmanager
def _emitting_into(lw: Lowerer, inner: Fn) -> Iterator[None]:
    """`lw` emits into `inner` while this lasts; the caller's function must not change
    meanwhile (code that kept its builder would be emitted where it cannot run)."""
    outer = lw.fn
    before = [len(blk.instructions) for blk in outer.func.blocks]
    lw.fn = inner
    try:
        yield
    finally:
        lw.fn = outer
    if [len(blk.instructions) for blk in outer.func.blocks] != before:
        raise RuntimeError("rune_jit: outlined code was emitted into its caller")


def _operands(i: ir.Instruction) -> list:
    if isinstance(i, ins.PhiInstr):
        return [v for v, _ in i.incomings]
    if isinstance(i, ins.GEPInstr):
        return [i.pointer, *i.indices]
    if isinstance(i, ins.InsertValue):
        return [i.aggregate, i.value]
    if isinstance(i, ins.ExtractValue):
        return [i.aggregate]
    return list(i.operands)


def _replace(i: ir.Instruction, old: ir.Value, new: ir.Value) -> None:
    i.replace_usage(old, new)
    if isinstance(i, ins.GEPInstr):
        i.pointer = new if i.pointer is old else i.pointer
        i.indices = [new if x is old else x for x in i.indices]
    elif isinstance(i, (ins.InsertValue, ins.ExtractValue)):
        i.aggregate = new if i.aggregate is old else i.aggregate
        if isinstance(i, ins.InsertValue):
            i.value = new if i.value is old else i.value
    i._clear_string_cache()


def _foreign(v, func: ir.Function) -> bool:
    """Whether `v` is an SSA value of `func` (an argument, or made by an instruction)."""
    if isinstance(v, ir.Argument):
        return v.parent is func
    return isinstance(v, ir.Instruction) and v.parent.parent is func


def _bytes(t: ir.Type) -> int:
    if isinstance(t, ir.VectorType):
        return t.count * _bytes(t.element)
    if isinstance(t, ir.IntType):
        return -(-t.width // 8)
    return {ir.HalfType: 2, ir.FloatType: 4}.get(type(t), 8)  # double, pointer


def _capture(lw: Lowerer, inner: Fn) -> ir.Value:
    """Rewrite `inner`'s reads of the caller's values to loads from its context, which
    the caller fills here; -> the caller's context."""
    found: dict[int, ir.Value] = {}
    uses: list[tuple[ir.Instruction, ir.Value]] = []
    for blk in inner.func.blocks:
        for i in blk.instructions:
            for v in _operands(i):
                if _foreign(v, lw.fn.func):
                    found.setdefault(id(v), v)
                    uses.append((i, v))
    offsets, size = {}, 0
    for key, v in found.items():
        offsets[key] = size
        size += -(-_bytes(v.type) // 8) * 8
    ctx = lw.fn.buffer(max(size, 8))
    at = ir.IRBuilder(inner.entry)
    at.position_at_start(inner.entry)
    arg = inner.func.args[0]
    loaded = {}
    for key, v in found.items():
        offset = ir.Constant(I64, offsets[key])
        lw.b.store(v, lw.b.gep(ctx, [offset], source_etype=I8), align=1)
        loaded[key] = at.load(at.gep(arg, [offset], source_etype=I8), typ=v.type, align=1)
    for i, v in uses:
        _replace(i, v, loaded[id(v)])
    return ctx
