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
from typing import Callable, Iterator, NamedTuple, Protocol

import llvmlite.ir as ir
from llvmlite.ir import instructions as ins

from .emit import I8, I64, PTR, Fn


class Emitting(Protocol):
    """What outlining needs of a Lowerer (lower.py): the function it emits into."""

    fn: Fn

    @property
    def b(self) -> ir.IRBuilder: ...


class Outlined(NamedTuple):
    function: ir.Function
    ctx: ir.Value  # in the caller: the context, filled where `outline` was called
    scratch_bytes: int  # scratch memory a call must pass (0 unless not own_arena)


def outline(lw: Emitting, name: str, body: Callable[[ir.Value, ir.Value], None],
            own_arena: bool = True) -> Outlined:
    """A new function `name` whose code `body(first, end)` emits through `lw` (see the
    module's docstring); -> the function and the caller's filled context. `own_arena`:
    an arena too big for the stack comes from malloc, else from the caller (chunks.py:
    a part called once a loop step must not allocate); such a function is never inlined,
    since being a function of its own is its point."""
    outer = lw.fn
    inner = Fn(outer.module, name, [PTR, I64, I64])
    inner.func.linkage = "internal"
    inner.own_arena = own_arena
    inner.loops = outer.loops  # a part of a loop step is inside those loops
    if not own_arena:
        inner.func.attributes.add("noinline")
    inner.inherit_signals(outer.signals_at_start())
    with _emitting_into(lw, inner):
        body(*inner.func.args[1:3])
    inner.finish()
    return Outlined(inner.func, _capture(lw, inner), 0 if own_arena else inner.scratch_bytes)


@contextmanager
def _emitting_into(lw: Emitting, inner: Fn) -> Iterator[None]:
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
    """Whether `v` is an SSA value of a function other than `func` (an argument, or made
    by an instruction): its caller's, or, for a function outlined from an outlined one,
    its caller's callers' (captured in turn when the caller is)."""
    if isinstance(v, ir.Argument):
        return v.parent is not func
    return isinstance(v, ir.Instruction) and v.parent.parent is not func


def _bytes(t: ir.Type) -> int:
    if isinstance(t, ir.VectorType):
        return t.count * _bytes(t.element)
    if isinstance(t, ir.IntType):
        return -(-t.width // 8)
    return {ir.HalfType: 2, ir.FloatType: 4}.get(type(t), 8)  # double, pointer


def _capture(lw: Emitting, inner: Fn) -> ir.Value:
    """Rewrite `inner`'s reads of the caller's values to loads from its context, which
    the caller fills here; -> the caller's context. An address at a constant offset from
    another (a buffer in the arena) is computed again from that one in `inner`: a part
    of a program that reads a thousand buffers receives one arena, not their thousand
    addresses (chunks.py)."""
    uses = [(i, v) for blk in inner.func.blocks for i in blk.instructions
            for v in _operands(i) if _foreign(v, inner.func)]
    sent: dict[int, ir.Value] = {}
    for _, v in uses:
        while _offset(v) and _foreign(v.pointer, inner.func):
            v = v.pointer
        if not _offset(v):
            sent.setdefault(id(v), v)
    offsets, size = {}, 0
    for key, v in sent.items():
        offsets[key] = size
        size += -(-_bytes(v.type) // 8) * 8
    ctx = lw.fn.slot(size)  # not in the arena, whose other buffers stay unescaped
    at = ir.IRBuilder(inner.entry)
    at.position_at_start(inner.entry)
    arg = inner.func.args[0]
    loaded: dict[int, ir.Value] = {}
    fill = _fillers(lw)
    for key, v in sent.items():
        offset = ir.Constant(I64, offsets[key])
        b = fill(v)
        b.store(v, b.gep(ctx, [offset], source_etype=I8), align=1)
        loaded[key] = at.load(at.gep(arg, [offset], source_etype=I8), typ=v.type, align=1)

    def inside(v: ir.Value) -> ir.Value:
        if not _foreign(v, inner.func):
            return v
        if id(v) not in loaded:
            loaded[id(v)] = at.gep(inside(v.pointer), v.indices, inbounds=v.inbounds,
                                   source_etype=v.source_etype)
        return loaded[id(v)]

    for i, v in uses:
        _replace(i, v, inside(v))
    return ctx


def _offset(v: ir.Value) -> bool:
    """Whether `v` is an address at constant offsets from another."""
    return isinstance(v, ins.GEPInstr) and all(isinstance(i, ir.Constant) for i in v.indices)


def _fillers(lw: Emitting) -> Callable[[ir.Value], ir.IRBuilder]:
    """Where the caller stores each value into the context: before the outermost loop
    around the call that the value does not change in (once, not once a step: a loop
    step in parts would otherwise store every address its parts read, each step), else
    where the call is."""
    fn = lw.fn
    order = {id(blk): i for i, blk in enumerate(fn.func.blocks)}
    heads = [(pre, order[id(header)]) for pre, header in fn.loop_blocks]

    def fill(v: ir.Value) -> ir.IRBuilder:
        made = order.get(id(v.parent), -1) if isinstance(v, ir.Instruction) else -1
        for pre, header in heads:
            if made < header:  # made before the loop began: it does not change in it
                b = ir.IRBuilder(pre)
                b.position_before(pre.terminator)
                return b
        return lw.b

    return fill
