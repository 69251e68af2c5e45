"""Long regions as a chain of functions, so that LLVM's cost stays linear in their length.

LLVM's optimizer and code generator cost more than linearly in the size of one function
(SLP's scheduling, register allocation and instruction selection work on whole blocks,
and a long loop step of unrolled small values is one block). A region whose code would
be long is therefore lowered in consecutive parts of bounded weight (`parts`), each an
internal function of its own (outline.py) that the region's code calls in order
(`lower_part`).

Values cross a cut in memory of the caller's, by address: a part makes each value a
later part reads in a buffer of the caller's (or copies it there), and copies each small
one it computes with (at most emit.SMALL_BYTES) into a stack slot of its own, which LLVM
keeps in registers. A loop step in parts reads its rows of xs and stores its ys in the
parts that use and make them (Lowerer.lower_region's thunks and sinks), and the addresses
its parts read are put in their contexts before the loop (outline.py): the code that
joins the parts stays as short as their number.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import llvmlite.ir as ir
import numpy as np

from ....ir import Region, Var
from ....ops.iterate import iterate_p
from .emit import PTR, SMALL_BYTES
from .lower import IN_PARTS, SMALL_ELEMENTS, Lowerer, RegionWalk
from .outline import outline
from .values import Array, Scalar, Value

# The weight of a part: about as many unrolled element operations (a fused operation on a
# larger value weighs one). bench/compile_scaling.py's f at k = 1000 compiled in 2.2 s
# with parts of 200 or 600, 2.6 s with parts of 2000; and the calls between parts cost
# nothing measurable in the step's run time.
PART_WEIGHT = 600


class Part(NamedTuple):
    lo: int  # the region's equations lo:hi
    hi: int
    ins: list[Var]  # values it reads that are made before it (or are the region's params)
    outs: list[Var]  # values it makes that are read after it (or are the region's outputs)
    copied: set[Var]  # ins that an equation other than a loop reads (see _entering)
    looped: set[Var]  # outs that loops (equations with regions) make: stacked, carried
    sunk: list[int]  # the region's outputs it makes and stores through their sinks


def weight(region: Region) -> int:
    """About how much code lowering `region` emits (see PART_WEIGHT)."""
    return sum(_eqn_weight(e) for e in region.eqns)


def _eqn_weight(eqn) -> int:
    """A small value's operation is unrolled, one per element; a larger one is a loop,
    or an operation fused into one (elementwise)."""
    fused = "elementwise" in eqn.prim.traits
    own = sum(v.type.size if v.type.size <= SMALL_ELEMENTS else 1 if fused else SMALL_ELEMENTS
              for v in eqn.outputs)
    return max(1, own) + sum(weight(r) for r in eqn.regions)


def parts(region: Region, reads: list[list[Var]], sunk: list[bool]) -> list[Part]:
    """The region's equations in parts of about PART_WEIGHT each; `reads[k]`: what
    lowering equation k reads (none for a member of an elementwise cluster but its last,
    which reads the cluster's inputs); `sunk[i]`: whether output i is stored by the
    part that makes it. A cut is only made where every value that crosses it can be held
    by the caller: not an iterate's results (its tapes grow in the part that made them)
    nor a value of unbounded size."""
    n = len(region.eqns)
    last = {o: n for o, s in zip(region.outputs, sunk) if isinstance(o, Var) and not s}
    for k, rs in enumerate(reads):
        for v in rs:
            last[v] = max(last.get(v, k), k)
    cuts, acc, blocked = [0], 0, -1
    for k, eqn in enumerate(region.eqns):
        acc += _eqn_weight(eqn)
        if eqn.prim is iterate_p or any(v.type.unsized for v in eqn.outputs):
            blocked = max([blocked] + [last.get(v, k) for v in eqn.outputs])
        if acc >= PART_WEIGHT and blocked <= k and k + 1 < n:
            cuts.append(k + 1)
            acc = 0
    cuts.append(n)
    return [_part(region, reads, sunk, lo, hi, last) for lo, hi in zip(cuts, cuts[1:])]


def _part(region: Region, reads: list[list[Var]], sunk: list[bool], lo: int, hi: int,
          last: dict) -> Part:
    made = {v for e in region.eqns[lo:hi] for v in e.outputs}
    ins = dict.fromkeys(v for rs in reads[lo:hi] for v in rs if v not in made)
    copied = {v for k in range(lo, hi) if not region.eqns[k].regions for v in reads[k]}
    outs = [v for e in region.eqns[lo:hi] for v in e.outputs if last.get(v, -1) >= hi]
    mine = [i for i, (o, s) in enumerate(zip(region.outputs, sunk))
            if s and isinstance(o, Var) and o in made]
    looped = {v for e in region.eqns[lo:hi] if e.regions for v in e.outputs}
    return Part(lo, hi, list(ins), outs, copied & set(ins), looped & set(outs), mine)


def lower_in_parts(walk: RegionWalk, env: dict, sinks: list) -> set[int] | None:
    """Lower `walk`'s region in parts (see the module's docstring) if it is long
    (IN_PARTS); -> the outputs stored through their sinks, or None if it is not long."""
    region = walk.region
    if weight(region) < PART_WEIGHT:
        return None
    cuts = parts(region, walk.reads(), [s is not None for s in sinks])
    if len(cuts) == 1:
        return None
    for p in cuts:
        lower_part(walk.lw, p, env, walk.dests or {}, region, sinks,
                   lambda inner, made_in, p=p: walk.lower(p.lo, p.hi, inner, made_in))
    return {i for p in cuts for i in p.sunk}


IN_PARTS.append(lower_in_parts)


def lower_part(lw: Lowerer, part: Part, env: dict, homes: dict, region: Region, sinks: list,
               lower: Callable[[dict, dict], None]) -> None:
    """Lower equations `part` as a function of their own that the code being emitted
    calls: `lower(inner, made_in)` lowers them in an environment holding `part.ins`,
    computing results in the caller's buffers `made_in` where it can, after which `inner`
    holds `part.outs`, which are then put in `env` as the caller's. `homes`: the caller's
    buffers that some values are computed in (the region's outputs)."""
    outer = lw.fn
    sent = {v: lw.materialize(env[v]) if v in part.copied and _small(env[v]) else env[v]
            for v in part.ins}
    box_at, box_bytes = _layout([v for v in part.outs if v.type.shape == ()])
    box = outer.slot(box_bytes) if box_at else None
    # (a loop's results are read at indices that vary: no stack slot of their own)
    bufs = {v: lw.fn.buffer(v.type.nbytes, slot=v not in part.looped) for v in part.outs
            if v.type.shape != () and v not in homes}
    kept: dict[Var, Value] = {}

    def body(first: ir.Value, end: ir.Value) -> None:
        inner = {v: _entering(lw, x, v in part.copied) for v, x in sent.items()}
        lower(inner, bufs)
        for i in part.sunk:
            sinks[i](inner[region.outputs[i]])
        for v in part.outs:
            x = inner[v]
            if v in box_at:
                lw.store(x, _at(lw, box, box_at[v]))
            elif _outlives(x, lw.fn.func):
                kept[v] = x
            else:
                kept[v] = lw.materialize(x, bufs[v] if v in bufs else homes[v])

    out = outline(lw, lw.fn.module.get_unique_name("rune.part"), body, own_arena=False)
    scratch = outer.buffer(out.scratch_bytes) if out.scratch_bytes else ir.Constant(PTR, None)
    status = lw.b.call(out.function, [out.ctx, lw.i64(0), lw.i64(0), scratch])
    outer.fail(lw.b.icmp_unsigned("!=", status, lw.i64(0)), status)
    for v in part.outs:
        env[v] = lw.settle(Array(v.type, _at(lw, box, box_at[v]))) if v in box_at else kept[v]


def _entering(lw: Lowerer, x, copied: bool) -> Value:
    """A value the part reads, in the part: a row is read there, and a small value that
    it computes with is copied into a stack slot of its own, which LLVM keeps in
    registers (it could not keep one whose address another function reads)."""
    x = x() if callable(x) else x
    return lw.materialize(x, lw.buffer(x.type)) if copied and _small(x) else x


def _small(x: Value) -> bool:
    return (not callable(x) and not isinstance(x, Scalar) and x.type.nbytes <= SMALL_BYTES
            and not (isinstance(x, Array) and x.rows is not None))


def _at(lw: Lowerer, box: ir.Value, offset: int) -> ir.Value:
    return lw.address(box, np.dtype(np.uint8), lw.i64(offset))


def _layout(vs: list[Var]) -> tuple[dict[Var, int], int]:
    at, size = {}, 0
    for v in vs:
        at[v] = size
        size += -(-max(v.type.nbytes, 1) // 8) * 8
    return at, size


def _outlives(v: Value, func: ir.Function) -> bool:
    """Whether `v` is an array in memory that outlives the part `func` (not its own)."""
    if not isinstance(v, Array) or v.rows is not None:
        return False
    p = v.ptr
    return not ((isinstance(p, ir.Instruction) and p.parent.parent is func)
                or (isinstance(p, ir.Argument) and p.parent is func))
