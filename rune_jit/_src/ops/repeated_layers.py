"""Repeated layers as a loop: a traced region that applies the same computation K times
in a row, each time to what the one before computed (a network's layers applied in a
Python loop), is rewritten, as its trace finishes, into a scan over the K layers whose
step is one layer. Every later stage (differentiation, vmap, lowering, LLVM) then sees
one layer, not K: compile time stops growing with K (issue 42 item 4).

    h = x                                   carry h
    for _ in range(k):          ==>         scan over k steps: h = tanh(W @ h + b)
        h = tanh(W @ h + b)                 (W and b read by the step: the same each time)

A *layer* is a run of equations; K layers in a row fold when they are the same
computation up to renaming, judged on the traced equations (not the Python source):

- each equation has the same primitive, parameters and operand types as the one at the
  same place in the other layers (so layers that differ in a shape, a dtype or a
  parameter never fold);
- each operand is, in every layer, the same: a value of the same layer at the same place
  (computed in the step), a value of the layer before at the same place (a carry, whose
  first value is what the first layer reads there), or a value from before the run: the
  same one in every layer (read by the step), or one per layer (stacked: a row a step);
- a constant that differs between layers is a row of a stacked constant (an operand);
- values of the layers used after the run are the scan's final carries, or rows of its
  outputs.

It folds where the loop should cost nothing that the unrolled code saved: the layers
hold no effect (a check or a callback names its step and line as written) and no
region; and either the carries are small or a layer holds an operation that ends
elementwise fusion anyway (a matrix product: unrolled big elementwise layers fuse into
one loop over memory, which a scan would split into K). Per-layer values from before
the run are stacked only while small (stacking distinct weight matrices would copy them
at every call), and the loop must have fewer equations than the layers unrolled.
Passes' own traces (`trace.transforming`) are left as built. `RUNE_JIT_FOLD_LAYERS=0`
turns it off (docs/design.md).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple, Sequence

import numpy as np

from .. import config, source_info, trace
from ..ir import Eqn, Literal, Var
from ..trace import Builder, Tracer, bind, using
from .scan import scan_flat
from .shape import broadcast_in_dim_p, concatenate, reshape, slice_op

MIN_LAYERS = 3  # fewer repeats than this stay as written
MIN_EQUATIONS = 24  # nor a run shorter than this: nothing to gain
SMALL = 64  # elements: a carry this small is cheaper carried than fused
SMALL_ROWS = 1024  # elements of a layer's own operands, stacked before the loop
MAX_PERIODS = 32  # candidate layer lengths tried, the most frequent first
MAX_SHIFTS = 4  # first equations of a run tried as the layer's start
MAX_TRIES = 24  # runs checked, the most equations first


class Plan(NamedTuple):
    start: int
    period: int
    count: int
    kinds: list  # per template equation, per operand: see _operand_kind
    carries: list[tuple[int, int]]  # (equation in the layer, output) carried
    init: list  # the carries' values for the first layer: atoms from before the run
    rows: list[list]  # per stacked operand: its atom in each layer
    ys: list[tuple[int, int]]  # (equation, output) stacked as the scan's outputs
    escapes: dict  # var of the run used after it -> ("carry", i) | ("ys", i, layer)


def fold(builder: Builder, outputs: Sequence[Any]) -> None:
    """Fold the repeated layers of the region `builder` traced (its results `outputs`),
    in place: its equations then hold the scan where the layers were."""
    if not config.fold_layers or len(builder.eqns) < MIN_EQUATIONS:
        return
    used_after = {o for o in outputs if isinstance(o, Var)} | builder.kept
    for _ in range(8):  # a fold may leave another run to fold
        plan = _find(builder.eqns, used_after)
        if plan is None:
            return
        _rewrite(builder, plan)


# ------------------------------------------------------------- finding a run


def _find(eqns: list[Eqn], used_after: set) -> Plan | None:
    sigs = _signatures(eqns)
    tries = [(start + shift, period, count - (1 if shift else 0))
             for start, period, count in _runs(sigs) for shift in range(min(period, MAX_SHIFTS))]
    tries = [t for t in tries if t[2] >= MIN_LAYERS and t[1] * t[2] >= MIN_EQUATIONS]
    for start, period, count in tries[:MAX_TRIES]:  # a bounded search: compile time
        plan = _plan(eqns, start, period, count, used_after)
        if plan is not None:
            return plan
    return None


def _signatures(eqns: list[Eqn]) -> np.ndarray:
    """One int per equation, equal for equations that may be the same place of two
    layers; unique (negative) for those that never fold."""
    ids: dict = {}
    out = np.empty(len(eqns), np.int64)
    for i, e in enumerate(eqns):
        key = _signature(e)
        out[i] = -1 - i if key is None else ids.setdefault(key, len(ids))
    return out


def _signature(e: Eqn) -> tuple | None:
    if (e.params and e.regions) or e.prim.effectful(e.params) or "ordered" in e.prim.traits:
        return None
    try:
        key = (e.prim, _key(e.params) if e.params else (),
               tuple((a.type.dtype.num, a.type.shape, type(a) is Literal) for a in e.inputs),
               tuple((v.type.dtype.num, v.type.shape) for v in e.outputs))
        hash(key)
    except TypeError:
        return None
    return key


_EXACT = (int, bool, str, type(None))  # types whose == is exact and never crosses types


def _key(v: Any) -> Any:
    """A hashable key equal only for equal parameters: 0.0 and -0.0, 1 and True and
    1.0 differ (Python's == would merge them)."""
    t = type(v)
    if t in _EXACT:
        return (t, v)
    if t is dict:
        return tuple(sorted((k, _key(x)) for k, x in v.items()))
    if t is tuple or t is list:
        return (t, tuple(map(_key, v)))
    if t is float:
        return (t, v.hex())
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("array", a.dtype.str, a.shape, a.tobytes())
    return (t, v)


def _runs(sigs: np.ndarray) -> list[tuple[int, int, int]]:
    """(start, period, count) of the runs of `count` >= 2 repeats of a period of
    signatures, the most equations covered first."""
    gaps: Counter = Counter()
    last: dict = {}
    for i, s in enumerate(sigs.tolist()):
        if s >= 0:
            if s in last:
                gaps[i - last[s]] += 1
            last[s] = i
    # a layer of equations that look alike (two chains of adds, interleaved) is a
    # multiple of the gap between them
    periods = dict.fromkeys(g * m for g, _ in gaps.most_common(MAX_PERIODS) for m in (1, 2, 3, 4))
    found = []
    for p in periods:
        if 2 * p > len(sigs):
            continue
        same = np.concatenate([[False], sigs[:-p] == sigs[p:], [False]])
        edges = np.flatnonzero(same[1:] != same[:-1])
        for a, b in zip(edges[::2], edges[1::2]):
            if b - a >= p:
                count = int(b - a + p) // p
                found.append((count * p, -p, int(a), count))
    found.sort(reverse=True)
    return [(a, -neg_p, count) for _, neg_p, a, count in found]


# ------------------------------------------------------------- checking it


def _plan(eqns: list[Eqn], start: int, period: int, count: int, used_after: set) -> Plan | None:
    run = eqns[start:start + period * count]
    if _carries_big_and_fused(run, period):
        return None
    where = {v: divmod(q, period) + (o,) for q, e in enumerate(run)
             for o, v in enumerate(e.outputs)}  # var -> (layer, equation, output)
    kinds, init, rows = [], {}, []
    for j in range(period):
        kinds.append([])
        for i in range(len(run[j].inputs)):
            kind = _operand_kind([run[m * period + j].inputs[i] for m in range(count)], where)
            if kind is None:
                return None
            if kind[0] == "carry":
                first = init.setdefault(kind[1], kind[2])
                if not _same(first, kind[2]):
                    return None
                kind = kind[:2]
            elif kind[0] == "rows":
                rows.append(kind[1])
                kind = ("rows", len(rows) - 1)
            kinds[j].append(kind)
    carries = sorted(init)
    escapes = _escapes(eqns[start + period * count:], used_after, where, count, carries)
    if not _worth_it(run[:period], carries, rows, escapes, count):
        return None
    ys = sorted({(j, o) for kind, _, j, o in escapes.values() if kind == "ys"})
    escapes = {v: ("carry", carries.index((j, o))) if kind == "carry"
               else ("ys", ys.index((j, o)), m) for v, (kind, m, j, o) in escapes.items()}
    return Plan(start, period, count, kinds, carries, [init[c] for c in carries], rows, ys,
                escapes)


def _operand_kind(atoms: list, where: dict) -> tuple | None:
    """What one operand of an equation of the layer is, from its atom in each layer:
    ("local", (j, o)), ("carry", (j, o), first layer's atom), ("same", atom),
    ("rows", atoms), or None if the layers differ in a way that does not fold."""
    at = [where.get(a) if isinstance(a, Var) else None for a in atoms]
    if all(r is not None and r[0] == m for m, r in enumerate(at)):
        places = {r[1:] for r in at}
        return ("local", places.pop()) if len(places) == 1 else None
    if at[0] is None and all(r is not None and r[0] == m - 1 for m, r in enumerate(at) if m):
        places = {r[1:] for r in at[1:]}
        return ("carry", places.pop(), atoms[0]) if len(places) == 1 else None
    if any(r is not None for r in at):
        return None  # a value of a layer two or more before, or mixed
    if all(_same(atoms[0], a) for a in atoms[1:]):
        return ("same", atoms[0])
    values = [a for a in atoms if isinstance(a, Var)]
    if len(set(values)) < len(values):
        return None  # values that come back: the layer is longer (a multiple of this one)
    return ("rows", atoms)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Literal) and isinstance(b, Literal):
        return a.type == b.type and a.value.tobytes() == b.value.tobytes()
    return a is b


def _escapes(after: list[Eqn], used_after: set, where: dict, count: int,
             carries: list) -> dict:
    """The run's values used after it -> ("carry" | "ys", layer, equation, output)."""
    used = set(used_after)
    for e in after:
        used.update(a for a in e.inputs if isinstance(a, Var))
        used.update(e.captures)
    # in program order: the rows read after the scan are equations of the program
    return {v: ("carry" if at[0] == count - 1 and at[1:] in carries else "ys",) + at
            for v, at in where.items() if v in used}


def _worth_it(layer: list[Eqn], carries: list, rows: list, escapes: dict, count: int) -> bool:
    # the loop's equations: one layer, the scan, two a row read after it (a slice, a
    # reshape), one a stacked value and layer
    rows_read = sum(kind == "ys" for kind, *_ in escapes.values())
    traced = [atoms for atoms in rows if not all(isinstance(a, Literal) for a in atoms)]
    if len(layer) + 1 + 2 * rows_read + (count + 1) * len(traced) >= len(layer) * count:
        return False  # no fewer equations than unrolled
    types = {(j, o): v.type for j, e in enumerate(layer) for o, v in enumerate(e.outputs)}
    small = all(types[c].size <= SMALL for c in carries)
    row_elements = sum(atoms[0].type.size for atoms in traced)
    return (small or _ends_fusion(layer)) and row_elements <= SMALL_ROWS


def _ends_fusion(layer: list[Eqn]) -> bool:
    return any(not ("elementwise" in e.prim.traits or "view" in e.prim.traits
                    or e.prim is broadcast_in_dim_p) for e in layer)


def _carries_big_and_fused(run: list[Eqn], period: int) -> bool:
    """What `_worth_it` would refuse, seen from the first two layers alone (a carry is
    a value of the first that the second reads): a big carry between layers that fuse.
    Checked first: the elementwise chains of a long composition (gammaln's 1,700
    equations) offer hundreds of runs, each refused only there."""
    if _ends_fusion(run[:period]):
        return False
    first = {v for e in run[:period] for v in e.outputs}
    return any(a in first and a.type.size > SMALL
               for e in run[period:2 * period] for a in e.inputs)


# ------------------------------------------------------------- rewriting


def _rewrite(builder: Builder, plan: Plan) -> None:
    """The run replaced by the scan, in `builder`, whose trace has finished: the
    equations before it stay, then the scan's, then those after it, reading the scan's
    results under the vars they read before."""
    end = plan.start + plan.period * plan.count
    template = builder.eqns[plan.start:plan.start + plan.period]
    after = builder.eqns[end:]
    del builder.eqns[plan.start:]
    builder.seen = {}  # no equation of the run may be reused (CSE)

    def outer(atom):
        if isinstance(atom, Literal):
            return atom.value
        captured = builder.captured.get(atom)
        return Tracer(atom, builder) if captured is None else captured

    carried = {c: i for i, c in enumerate(plan.carries)}

    def step(_laned, carry, rows):
        at: dict = {}

        def operand(kind):
            tag, what = kind
            if tag == "local":
                return at[what]
            if tag == "carry":
                return carry[carried[what]]
            return outer(what) if tag == "same" else rows[what]

        for j, (e, kinds) in enumerate(zip(template, plan.kinds)):
            with source_info.at(e.source):
                outs = bind(e.prim, *[operand(k) for k in kinds], **e.params)
            at.update(((j, o), x) for o, x in enumerate(outs))
        return [at[c] for c in plan.carries], [at[y] for y in plan.ys]

    with using(builder), source_info.at(template[0].source):
        init = [outer(a) for a in plan.init]
        xs = [_stacked([outer(a) for a in atoms]) for atoms in plan.rows]
        outs = scan_flat(step, init, xs, length=plan.count)
        made = {v: _result(outs, len(plan.carries), esc) for v, esc in plan.escapes.items()}
    renamed = {t.ir_var: v for v, t in made.items()}
    builder.eqns[plan.start:] = [e.rebuilt(outputs=tuple(renamed.get(o, o) for o in e.outputs))
                                 for e in builder.eqns[plan.start:]] + after


def _result(outs: list, num_carry: int, escape: tuple) -> Tracer:
    if escape[0] == "carry":
        return outs[escape[1]]
    ys, m = outs[num_carry + escape[1]], escape[2]
    shape = ys.type.shape
    return reshape(slice_op(ys, (m,) + (0,) * (len(shape) - 1), (m + 1,) + shape[1:]),
                   shape[1:])


def _stacked(values: list) -> Any:
    if not any(isinstance(v, Tracer) for v in values):
        return np.stack(values)
    return concatenate([reshape(v, (1,) + np.shape(v) if not isinstance(v, Tracer)
                                else (1,) + v.shape) for v in values], 0)


trace.finishing = fold
