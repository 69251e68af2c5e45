"""What loops are made of in native code: carries, tapes, rows read in place, and the
while loop of one iterate (or one lane of it).

A carry of shape () lives in a register (a phi). A larger carry lives in two
buffers that swap each step: the step writes the next carry into the buffer
the current one does not use, so no step allocates and none copies a carry it
leaves unchanged. A small one (emit.SMALL_BYTES) is copied back in place instead,
so that LLVM can keep it in registers. A carry the step only updates in places
(`b.at[i].set(row)`, nothing else reading b) is updated in its own buffer: a loop
that fills a buffer row by row writes each row once, where a copy of the rest each
step would make it quadratic in the buffer's size.
"""

from __future__ import annotations

from typing import Sequence

import llvmlite.ir as ir

from ....ir import Region, Type, Var
from ....ops.gather import scatter_p
from ....ops.index import dynamic_update_slice_p
from ....ops.iterate import iterate_p
from . import arith, emit
from .emit import SMALL_BYTES
from .lower import Lowerer
from .values import Array, Scalar, Value, row_bytes


class Carries:
    """Loop-carried values: registers for scalars, a pair of swapping buffers otherwise.
    A small carry's pair is a buffer and its copy (no swap), so that both are fixed
    stack slots LLVM keeps in registers (emit.SMALL_BYTES)."""

    def __init__(self, lw: Lowerer, types: Sequence[Type], step: Region | None = None,
                 first: int = 0):
        """`step` (its carries from param `first` on), if given, lets a carry that the
        step only updates in place (`in_place`) go without a spare buffer."""
        self.lw, self.types = lw, list(types)
        alone = in_place(step, first, self.types) if step is not None else [False] * len(types)
        self.spare = [None if t.shape == () else IN_PLACE if a else lw.buffer(t)
                      for t, a in zip(self.types, alone)]

    def start(self, values: Sequence[Value], firsts: Sequence[ir.Value | None] = ()
              ) -> list[ir.Value]:
        """The registers of the first step. `firsts[i]`, if given, is the buffer array
        carry i starts in (where the loop's caller wants it: no copy when the loop ends
        there, and none at the start when the initial value is already there)."""
        regs = []
        firsts = list(firsts) + [None] * (len(self.types) - len(firsts))
        for v, t, spare, dest in zip(values, self.types, self.spare, firsts):
            if spare is None:
                regs.append(self.lw.scalar(v))
            else:
                first = self.lw.materialize(v, dest or self.lw.buffer(t)).ptr
                regs += [first, first if spare is IN_PLACE else spare]
        return regs

    def settled(self, values: Sequence[Value], firsts: Sequence[ir.Value | None]
                ) -> list[Value]:
        """The final carries, each array carry given a buffer in `firsts` now in it
        (copied there if the loop ended in its spare)."""
        out = []
        for v, dest in zip(values, list(firsts) + [None] * len(values)):
            if dest is None or not isinstance(v, Array):
                out.append(v)
                continue
            b = self.lw.b
            elsewhere = b.icmp_unsigned("!=", b.ptrtoint(v.ptr, emit.I64),
                                        b.ptrtoint(dest, emit.I64))
            self.lw.fn.if_else(elsewhere, lambda v=v, dest=dest: self.lw.store(v, dest) or [],
                               lambda: [])
            out.append(Array(v.type, dest))
        return out

    def values(self, regs: Sequence[ir.Value]) -> list[Value]:
        it, out = iter(regs), []
        for t, spare in zip(self.types, self.spare):
            out.append(Scalar(t, next(it)) if spare is None else Array(t, next(it)))
            if spare is not None:
                next(it)
        return out

    def dests(self, step: Region, regs: Sequence[ir.Value], first: int
              ) -> dict[Var, ir.Value]:
        """Where the step computes each array carry it makes: the buffer the current
        carry does not use. Nothing in the step reads that buffer (it holds the carry of
        two steps ago), so a concatenate or an update writes each piece there once, and
        `step` finds the value in place (no copy). A large carry updated in a window and
        read by nothing else is computed in its current buffer (`updated_in_place`).
        `first`: the index of the first carry among the step's params."""
        producers = {v: e for e in step.eqns for v in e.outputs}
        it, out = iter(regs), {}
        for k, (o, spare) in enumerate(zip(step.outputs, self.spare)):
            cur = next(it)
            if spare is not None:
                other = next(it)
                if isinstance(o, Var) and o in producers:
                    big = self.types[k].nbytes > SMALL_BYTES
                    here = big and updated_in_place(step, producers[o], step.params[first + k],
                                                    o)
                    out.setdefault(o, cur if here else other)
        return out

    def step(self, regs: Sequence[ir.Value], new: Sequence[Value]) -> list[ir.Value]:
        """The registers after a step that returned `new`. Every new carry is computed
        before any is copied in place: one may read another's current buffer."""
        it, out, copies = iter(regs), [], []
        for v, spare in zip(new, self.spare):
            if spare is None:
                next(it)
                out.append(self.lw.scalar(v))
                continue
            cur, other = next(it), next(it)
            if isinstance(v, Array) and v.ptr is cur:  # unchanged: no copy, no swap
                out += [cur, other]
                continue
            if spare is IN_PLACE:  # (not made in place after all: computed aside first)
                copies.append((self.lw.materialize(v, self.lw.buffer(v.type)), cur))
                out += [cur, cur]
                continue
            self.lw.store(v, other)
            if v.type.nbytes <= SMALL_BYTES:  # computed aside, copied in place below
                copies.append((Array(v.type, other), cur))
                out += [cur, other]
            else:
                out += [other, cur]
        for v, cur in copies:
            self.lw.store(v, cur)
        return out


class Tapes:
    """The tapes of an iterate: one row per step, grown (doubling) as steps are taken,
    so memory follows the steps a loop takes, not its max_steps. A tape holds at least
    one row, even for a loop that takes no step, so that a read of a row it does not
    hold can read its last one instead (see `Lowerer.load`)."""

    FIRST_ROWS = 16

    def __init__(self, lw: Lowerer, types: Sequence[Type], max_steps: int):
        self.lw, self.types, self.max_steps = lw, list(types), max_steps
        self.slots = [lw.fn.growable_slot() for _ in self.types]
        self.capacity = ir.IRBuilder(lw.fn.prologue).alloca(emit.I64)
        lw.fn.at_entry.store(ir.Constant(emit.I64, 0), self.capacity)
        self.reserve(lw.i64(1))

    def reserve(self, rows: ir.Value) -> None:
        """Room for `rows` rows in every tape."""
        if not self.types:
            return
        lw, b = self.lw, self.lw.b
        cap = b.load(self.capacity, typ=emit.I64)

        def grow():
            new = arith.maximum(b, b.mul(cap, lw.i64(2)), lw.i64(self.FIRST_ROWS), True)
            new = arith.maximum(b, arith.maximum(b, new, rows, True), lw.i64(self.max_steps),
                                False)
            for slot, t in zip(self.slots, self.types):
                old = b.load(slot, typ=emit.PTR)
                # (a row of no bytes still asks for some: realloc to 0 bytes frees)
                size = b.mul(new, lw.i64(max(row_bytes(t), 1)))
                ptr = lw.fn.call("realloc", emit.PTR, [old, size])
                lw.fail_if_any(b.icmp_unsigned("==", ptr, ir.Constant(emit.PTR, None)), "memory")
                b.store(ptr, slot)
            b.store(new, self.capacity)
            return []

        lw.fn.if_else(b.icmp_signed(">", rows, cap), grow, lambda: [])

    def pointers(self) -> list[ir.Value]:
        return [self.lw.b.load(s, typ=emit.PTR) for s in self.slots]

    def arrays(self) -> list[Array]:
        rows = self.lw.b.load(self.capacity, typ=emit.I64)
        return [Array(t, p, rows) for t, p in zip(self.types, self.pointers())]


def row(lw: Lowerer, x: Array, t: Type, index: ir.Value) -> Value:
    """Element `index` of a buffer of values of type `t`, read in place (a scalar loads)."""
    return lw.settle(Array(t, row_pointer(lw, x.ptr, t, index)))


def row_pointer(lw: Lowerer, base: ir.Value, t: Type, index: ir.Value) -> ir.Value:
    return lw.address(base, t.dtype, lw.b.mul(index, lw.i64(t.size)))


def while_steps(lw: Lowerer, consts: list, init: list, types: list[Type], step: Region,
                until: Region, max_steps: int, site: int, lane: ir.Value | None,
                record, firsts: Sequence[ir.Value | None] = ()
                ) -> tuple[list[Value], ir.Value]:
    """The while loop of one iterate (or one lane of it); -> (final carries, steps).
    `firsts`: buffers the array carries start (and end) in, as `Carries.start`."""
    carries = Carries(lw, types, step, len(consts))
    nc = len(types)

    def test(regs):
        n, vals = regs[0], carries.values(regs[1:])
        done = lw.scalar(lw.lower_region(until, consts + vals)[0])
        running = lw.b.not_(done)
        lw.fail_if_any(lw.b.and_(running, lw.b.icmp_signed(">=", n, lw.i64(max_steps))),
                       "iterate", site, lane)
        return running

    def body(regs):
        n, vals = regs[0], carries.values(regs[1:])
        lw.poll_interrupt(n, step)
        outs = lw.lower_region(step, consts + vals, carries.dests(step, regs[1:], len(consts)))
        record(n, outs[nc:])
        return [lw.b.add(n, lw.i64(1))] + carries.step(regs[1:], outs[:nc])

    final = lw.fn.while_loop([lw.i64(0)] + carries.start(init, firsts), test, body)
    return carries.settled(carries.values(final[1:]), firsts), final[0]


IN_PLACE = object()  # the spare of a carry that has none: the step updates it in place


def in_place(step: Region, first: int, types: Sequence[Type]) -> list[bool]:
    """Per carry: whether the step makes its next value in its current buffer
    (`updated_in_place`), so that it needs no spare."""
    producers = {v: e for e in step.eqns for v in e.outputs}
    return [t.nbytes > SMALL_BYTES and isinstance(o, Var) and o in producers
            and updated_in_place(step, producers[o], step.params[first + k], o)
            for k, (o, t) in enumerate(zip(step.outputs, types))]


# primitives whose lowering copies operand 0 to their output's buffer (no copy if it is
# there already) and then writes some of its elements
UPDATES = {dynamic_update_slice_p, scatter_p}


def updated_in_place(step: Region, eqn, param: Var, out: Var | None = None) -> bool:
    """Whether `eqn` updates some elements of the carry `param` (a dynamic_update_slice,
    a scatter: `b.at[i].set(row)`), and nothing else in the step reads `param`: the
    update can then be written over the current carry, which no later equation reads.
    Or whether `eqn` is a loop whose carry `out` starts from `param` (`donated`)."""
    if eqn.prim is iterate_p:
        return out is not None and donated(step, eqn, param, out)
    if eqn.prim not in UPDATES or eqn.inputs[0] is not param:
        return False
    reads = sum(a is param for e in step.eqns for a in e.inputs)
    reads += sum(param in e.captures for e in step.eqns)
    return reads == 1 and not any(o is param for o in step.outputs)


# views: what reads `param` in a step besides a loop it is donated to may be one of these,
# whose value that loop's first carries take (read when the loop starts, before its
# first step writes anything)
VIEWS = {"dynamic_slice", "reshape", "slice", "squeeze", "convert"}


def donated(step: Region, eqn, param: Var, out: Var) -> bool:
    """Whether the iterate `eqn` (of no lanes) may run its carry `out` in the buffer of
    the enclosing loop's carry `param`: `out` starts from `param`, and nothing else in
    the step reads `param` but views that only `eqn`'s initial carries read. (The
    snapshot buffer of a checkpointed loop's reverse pass: the loop that advances to
    the step to reverse updates it, and would otherwise copy it twice.)"""
    p = eqn.params
    first = p["num_laned"]  # (the captures are not among the inputs: `e.captures`)
    j = list(eqn.outputs).index(out)
    if p["lanes"] or j >= p["num_carry"] or eqn.inputs[first + j] is not param:
        return False
    todo, seen = [param], set()
    while todo:
        v = todo.pop()
        if v in seen or any(o is v for o in step.outputs):
            return False
        seen.add(v)
        for e in step.eqns:
            at = [i for i, a in enumerate(e.inputs) if a is v]
            if v in e.captures:
                return False
            if e is eqn and any(i < first for i in at):
                return False
            if at and e is not eqn:
                if e.prim.name not in VIEWS or at != [0] or e.regions:
                    return False
                todo += list(e.outputs)
    return True
