"""Structured primitives as `scf`: a scan is an `scf.for` carrying its carries and its
stacked ys; an iterate is an `scf.while` whose `before` region runs `until` and whose
`do` region checks max_steps (`cf.assert`), runs the step and writes the step's ys into
its tapes; cond is an `scf.if`; remat, root, the custom derivative calls and checkpointed
scans are their bodies (the derivatives are in the IR already, as for the CPU backend).

Loops with lanes (a vmapped iterate, the counted scans of its reverse mode) run lane by
lane: an `scf.for` over the lanes whose body is the loop of one lane, reading its part of
each laned operand and writing its part of each result. Each lane stops on its own test,
as in the CPU backend's lane blocks (which run blocks of lanes in vector registers).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...ir import UNBOUNDED, Region, Type
from ...ops.checkpointed import checkpointed_p
from ...ops.checkpointed_scan import checkpointed_lin_p
from ...ops.control import cond_p, stop_gradient_p
from ...ops.custom import custom_jvp_call_p, custom_vjp_call_p
from ...ops.iterate import COUNT, iterate_p, named
from ...ops.remat import name_p, remat_p
from ...ops.root import root_p
from ...ops.scan import Layout, scan_p
from ...ops.tangent_solve import tangent_solve_p
from .arrays import delinearize, ix, to_index, zeros
from .emit import RULES, Emitter, Value, rule, unsized


class Lane:
    """One lane of values that lead with the lanes (after a row axis, for rows of xs, ys
    and tapes): its part of a value, and a value with its part replaced. Without lanes,
    the value itself (or its row). `rows=True` takes every row of the lane (its tape)."""

    def __init__(self, em: Emitter, idx: list[str]):
        self.em, self.idx = em, idx

    def part(self, x: Value, row: str | None = None, rows: bool = False) -> Value:
        em, at = self.em, self._at(row, rows)
        t = x.type.with_shape(x.type.shape[:int(rows)] + x.type.shape[len(at):])
        if not self.idx and row is None:
            return x
        if 0 in t.shape:  # nothing to read (MLIR rejects a slice at the end of an axis)
            return Value(em.op(f"tensor.empty() : {em.ty(t)}", "e"), t)
        if not t.shape:
            return Value(em.op(f"tensor.extract {x}[{', '.join(at)}] : {em.ty(x.type)}"), t)
        return Value(em.op(f"tensor.extract_slice {x}{self._box(at, x.type, rows)} : "
                           f"{em.ty(x.type)} to {em.ty(t)}"), t)

    def put(self, whole: Value, v: Value, row: str | None = None, rows: bool = False) -> str:
        em, at = self.em, self._at(row, rows)
        if not self.idx and row is None:
            return v.name
        if 0 in v.type.shape:
            return whole.name
        if not v.type.shape:
            return em.op(f"tensor.insert {v} into {whole}[{', '.join(at)}] : "
                         f"{em.ty(whole.type)}")
        return em.op(f"tensor.insert_slice {v} into {whole}{self._box(at, whole.type, rows)} : "
                     f"{em.ty(v.type)} into {em.ty(whole.type)}")

    def _at(self, row: str | None, rows: bool) -> list[str]:
        """The leading offsets of the part."""
        return (["0"] if rows else [] if row is None else [row]) + self.idx

    @staticmethod
    def _box(at: list[str], t: Type, rows: bool) -> str:
        """[offsets] [sizes] [strides] of the part at `at` of a value of type `t`."""
        rest = t.shape[len(at):]
        sizes = [str(t.shape[0])] * rows + ["1"] * (len(at) - rows) + [str(n) for n in rest]
        offsets = at + ["0"] * len(rest)
        return f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join(['1'] * len(sizes))}]"


def by_lanes(em: Emitter, lanes: tuple, whole: list[Value],
             one: Callable[[Lane, list[Value]], list[str]]) -> list[Value]:
    """`one(lane, whole values) -> whole values` for each lane in order; without lanes,
    `one` once, on the values themselves."""
    if not lanes:
        return [Value(n, v.type) for n, v in zip(one(Lane(em, []), list(whole)), whole)]
    count = em.index(int(np.prod(lanes)))
    return em.counted(count, whole, lambda i, vals: one(
        Lane(em, delinearize(em, i, lanes)), vals), "lanes")


# ------------------------------------------------------------- scan


@rule(scan_p)
def _scan(em, args, out_types, *, step, num_carry, num_laned, length, reverse, counted):
    """for t in range(length) (reversed: from the last): carry, ys[t] = step(carry, xs[t]).
    A counted scan runs each lane min(length, its count) steps and leaves its other ys rows
    zero."""
    lay = Layout(len(args), dict(num_captures=0, counted=counted, num_laned=num_laned,
                                 num_carry=num_carry))
    _, counts, laned, init, xs = lay.operands(args)
    lanes = () if counts is None else counts.type.shape
    if any(t.unsized for t in out_types) or (lanes and any(x.type.unsized for x in xs)):
        raise unsized("a counted scan with lanes, or stacking its ys,")
    ys = [Value(zeros(em, t), t) for t in out_types[num_carry:]]

    def one(lane: Lane, whole: list[Value]) -> list[str]:
        steps = em.index(length)
        if counts is not None:
            mine = ix(em, "maxsi", to_index(em, lane.part(counts)), em.index(0))
            steps = ix(em, "minsi", mine, steps)
        last = ix(em, "subi", steps, em.index(1)) if reverse else None
        start = [lane.part(c) for c in whole[:num_carry]]

        def step_at(i, vals):
            t = ix(em, "subi", last, i) if reverse else i
            outs = em.region(step, [lane.part(v) for v in laned] + vals[:num_carry]
                             + [lane.part(x, t) for x in xs])
            return [o.name for o in outs[:num_carry]] + [
                lane.put(acc, y, t) for acc, y in zip(vals[num_carry:], outs[num_carry:])]
        outs = em.counted(steps, start + whole[num_carry:], step_at)
        return [lane.put(w, c) for w, c in zip(whole[:num_carry], outs[:num_carry])] + [
            o.name for o in outs[num_carry:]]
    return [v.name for v in by_lanes(em, lanes, list(init) + ys, one)]


# ------------------------------------------------------------- iterate


@rule(iterate_p)
def _iterate(em, args, out_types, *, step, until, num_carry, num_laned, max_steps, lanes,
             shown, together):
    """while not until(carry): check n < max_steps; carry, tapes[n] = step(carry); n += 1.
    Per lane, each on its own test."""
    laned, init = list(args[:num_laned]), list(args[num_laned:])
    count_t = Type(COUNT, tuple(lanes))
    counts = Value(zeros(em, count_t), count_t)
    tapes = [Value(zeros(em, t), t) if not t.unsized else growing(em, t)
             for t in out_types[num_carry + 1:]]
    if lanes and tapes and max_steps >= UNBOUNDED:
        raise unsized("a vmapped iterate's tapes")
    message = (f"rune_jit.iterate: until is still false after max_steps = {max_steps} steps"
               + (", in a lane of the map" if any(named(shown, together)) else ""))

    def one(lane: Lane, whole: list[Value]) -> list[str]:
        mine = [lane.part(v) for v in laned]
        start = [lane.part(c) for c in whole[:num_carry]]
        tapes = [lane.part(t, rows=True) for t in whole[num_carry + 1:]]
        n, *outs = while_loop(em, mine, start, tapes, (step, until), max_steps, message)
        return ([lane.put(w, c) for w, c in zip(whole[:num_carry], outs[:num_carry])]
                + [lane.put(whole[num_carry], n)]
                + [lane.put(w, t, rows=True) for w, t in zip(whole[num_carry + 1:],
                                                              outs[num_carry:])])
    return [v.name for v in by_lanes(em, tuple(lanes), init + [counts] + tapes, one)]


def while_loop(em: Emitter, laned: list[Value], start: list[Value], tapes: list[Value],
               regions: tuple[Region, Region], max_steps: int, message: str) -> list[Value]:
    """The scf.while of one lane: -> [its step count, carries..., tapes...] (the lane's own
    tapes, which the loop over lanes puts back whole)."""
    step, until = regions
    nc = len(start)
    inits = [em.const(0, COUNT)] + start + tapes
    before = [Value(em.fresh("w"), v.type) for v in inits]
    types = ", ".join(em.ty(v.type) for v in inits)
    bound = ", ".join(f"{a.name} = {v.name}" for a, v in zip(before, inits))
    names = em.ops(f"scf.while ({bound}) : ({types}) -> ({types}) {{", len(inits), "while")
    with em.nested():
        [stop] = em.region(until, laned + before[1:1 + nc])
        go = em.op(f"arith.xori {stop}, {em.const(True, np.dtype(bool))} : i1")
        em.line(f"scf.condition({go}) {', '.join(a.name for a in before)} : {types}")
    em.line("} do {")
    after = [Value(em.fresh("w"), v.type) for v in inits]
    em.line(f"^bb0({', '.join(f'{a.name}: {em.ty(a.type)}' for a in after)}):")
    with em.nested():
        n = after[0]
        if max_steps < UNBOUNDED:
            ok = em.op(f"arith.cmpi slt, {n}, {em.const(max_steps, COUNT)} : i64")
            em.stmt(f'cf.assert {ok}, "{message}"')
        outs = em.region(step, laned + after[1:1 + nc])
        row = to_index(em, n) if tapes else None
        written = [Lane(em, []).put(room(em, t, row), y, row)
                   for t, y in zip(after[1 + nc:], outs[nc:])]
        n1 = em.op(f"arith.addi {n}, {em.const(1, COUNT)} : i64")
        em.line(f"scf.yield {', '.join([n1] + [o.name for o in outs[:nc]] + written)} : {types}")
    em.close()
    return [Value(name, v.type) for name, v in zip(names, inits)]


FIRST_ROWS = 16  # an unbounded tape's first capacity, doubled as steps fill it


def growing(em: Emitter, t: Type) -> Value:
    """An unbounded tape (t leads with UNBOUNDED): FIRST_ROWS rows of zeros, its type
    dynamic."""
    first = t.with_shape((FIRST_ROWS,) + t.shape[1:])
    return Value(em.op(f"tensor.cast {zeros(em, first)} : {em.ty(first)} to {em.ty(t)}"), t)


def room(em: Emitter, tape: Value, row: str) -> Value:
    """`tape` with room for `row`: an unbounded tape twice as long when it is full."""
    t = tape.type
    if not t.unsized:
        return tape
    rows = em.op(f"tensor.dim {tape}, {em.index(0)} : {em.ty(t)}", "ix")
    full = em.op(f"arith.cmpi uge, {row}, {rows} : index")
    [grown] = em.ops(f"scf.if {full} -> ({em.ty(t)}) {{", 1, "grow")
    with em.nested():
        twice = ix(em, "muli", rows, em.index(2))
        bigger = em.op(f"tensor.empty({twice}) : {em.ty(t)}", "e")
        sizes = ", ".join([rows] + [str(n) for n in t.shape[1:]])
        ones, zero = ", ".join(["1"] * t.ndim), ", ".join(["0"] * t.ndim)
        copied = em.op(f"tensor.insert_slice {tape} into {bigger}[{zero}] [{sizes}] [{ones}] : "
                       f"{em.ty(t)} into {em.ty(t)}")
        em.line(f"scf.yield {copied} : {em.ty(t)}")
    em.line("} else {")
    with em.nested():
        em.line(f"scf.yield {tape} : {em.ty(t)}")
    em.close()
    return Value(grown, t)


# ------------------------------------------------------------- cond and bodies


@rule(cond_p)
def _cond(em, args, out_types, *, branches):
    """branches[0] if the predicate holds, else branches[1]."""
    pred, *ops = args
    types = ", ".join(em.ty(t) for t in out_types)
    names = em.ops(f"scf.if {pred} -> ({types}) {{" if out_types else f"scf.if {pred} {{",
                   len(out_types), "if")
    for k, branch in enumerate(branches):
        if k:
            em.line("} else {")
        with em.nested():
            outs = em.region(branch, ops)
            em.line(f"scf.yield {', '.join(o.name for o in outs)} : {types}"
                    if outs else "scf.yield")
    em.close()
    return names


def _body(key: str, pick: Callable = lambda r: r) -> Callable:
    """A primitive computed as its region `key` (compiled code computes each body once)."""
    return lambda em, args, out_types, **params: [
        o.name for o in em.region(pick(params[key]), args)]


RULES.update({
    remat_p: _body("body"), checkpointed_p: _body("body"),
    checkpointed_lin_p: _body("forward"), root_p: _body("solve"),
    tangent_solve_p: _body("solves", lambda r: r[0]),
    custom_jvp_call_p: _body("fun"), custom_vjp_call_p: _body("fun"),
    stop_gradient_p: lambda em, args, out_types: [args[0].name],
    name_p: lambda em, args, out_types, *, name: [args[0].name],
})
