"""Reverse mode of a scan from one tape of its carries (rule 3: keep only what is needed).

A step's extensive residuals are often cheap functions of the carries: in
c' = tanh(W c + b), W's gradient reads c (the carry the step starts from) and tanh's
derivative reads 1 - c'² (of the carry it ends with). Stacked as residuals they cost two
carries a step, where the math needs one: the carry at step t and at step t + 1 are rows
t and t + 1 of one tape of the carries each step starts from (the final carry after the
last). So a residual computed, by a few cheap equations, from the invariants and the
known carries a step starts from (*current*) or ends with (*next*) is recomputed in the
unknown step from that tape, when the tape costs fewer bytes than the residuals it
replaces. The unknown step reads row t of the tape as a row, like any tape, and row
t ± 1 (or the final carry, at the last step) through a clamped dynamic slice of the
tape, which it captures whole: nothing is copied. Plain scans only: a counted scan's
(iterate's reverse mode) last step differs per lane.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from ..interpret import eval_region
from ..ir import Region, Var
from ..trace import type_of_value
from .elementwise import COMPARISONS, add, eq, select, sub
from .index import dynamic_slice
from .loops import LoopSplit
from .shape import iota, reshape

# equations a residual is recomputed through, at most, and those it may use: arithmetic
# that costs about as much as reading a saved value would, and views
MAX_EQNS = 16
CHEAP = {"add", "sub", "mul", "neg", "abs", "sign", "max", "min", "select", "convert",
         "logical_not", "logical_and", "logical_or", *COMPARISONS,
         "reshape", "broadcast_in_dim", "transpose", "slice", "rev"}


@dataclass
class CarryTape:
    """Which known carries the tape holds, and the residuals recomputed from it."""

    carries: list[int]  # indices among the known carries
    current: Region  # (invariants, the carries a step starts from) -> residuals
    next: Region  # (invariants, the carries it ends with) -> residuals


def with_carry_tape(split: LoopSplit) -> tuple[LoopSplit, CarryTape | None]:
    """`split` with its cheap carry-made extensive residuals replaced by a tape of the
    carries they are made from (saved last, as extensive residuals: the known step
    returns the carries it starts from), if that saves bytes; kinds "current" and
    "next" say which residual comes from which region's outputs."""
    step = split.known_step
    n_inv = len(split.hoisted.outputs) - split.num_intensive
    n_kc, n_ext = split.unk_carry.count(False), split.num_extensive
    ext = list(step.outputs[len(step.outputs) - n_ext:])
    leaves = {"current": list(step.params[n_inv:n_inv + n_kc]),
              "next": [o if isinstance(o, Var) else None for o in step.outputs[:n_kc]]}
    how = _sources(step, set(step.params[:n_inv]), ext, leaves)
    carries = sorted({i for _, used in how.values() for i in used})
    starts = leaves["current"]
    if sum(ext[j].type.nbytes for j in how) <= sum(starts[i].type.nbytes for i in carries):
        return split, None
    order = {name: [j for j, (n, _) in how.items() if n == name] for name in leaves}
    # (a carry the step ends with as a constant is a param of nothing the region reads)
    regions = {name: _region(step, list(step.params[:n_inv]) + [
        vs[i] or Var(starts[i].type) for i in carries], [ext[j] for j in order[name]])
        for name, vs in leaves.items()}
    kept = [j for j in range(n_ext) if j not in how]
    kinds = [(kind, i) if kind != "extensive" else
             (how[i][0], order[how[i][0]].index(i)) if i in how else (kind, kept.index(i))
             for kind, i in split.kinds]
    body = Region(step.params, step.eqns, step.outputs[:len(step.outputs) - n_ext]
                  + tuple(ext[j] for j in kept) + tuple(starts[i] for i in carries))
    return (replace(split, known_step=body, kinds=kinds,
                    num_extensive=len(kept) + len(carries)),
            CarryTape(carries, regions["current"], regions["next"]))


def _sources(step: Region, inv: set, ext: list, leaves: dict) -> dict[int, tuple]:
    """Extensive residual j -> (which carries make it, "current" or "next"; the indices
    of those it reads), for each that a few cheap equations make from them."""
    producer = {o: e for e in step.eqns for o in e.outputs}
    how = {}
    for j, r in enumerate(ext):
        for name, vs in leaves.items():
            used = _reads(r, producer, inv, {v: i for i, v in enumerate(vs) if v})
            if used is not None:
                how[j] = (name, used)
                break
    return how


def _reads(r, producer: dict, inv: set, leaves: dict) -> set | None:
    """The leaves that the equations computing `r` from `leaves` and `inv` read, if those
    equations are few and cheap; else None."""
    eqns, used, todo, seen = set(), set(), [r], set()
    while todo:
        v = todo.pop()
        if not isinstance(v, Var) or v in seen or v in inv:
            continue
        seen.add(v)
        if v in leaves:
            used.add(leaves[v])
            continue
        e = producer.get(v)
        if e is None or e.regions or e.prim.name not in CHEAP or len(eqns) >= MAX_EQNS:
            return None
        if e not in eqns:
            eqns.add(e)
            todo.extend(e.inputs)
    return used


def _region(step: Region, flat: Sequence[Var], outputs: list) -> Region:
    """The equations of `step` computing `outputs` from `flat` (a slice of it)."""
    need = {o for o in outputs if isinstance(o, Var)}
    eqns = []
    for e in reversed(step.eqns):
        if any(o in need for o in e.outputs) and not any(o in flat for o in e.outputs):
            eqns.append(e)
            need.update(a for a in e.inputs if isinstance(a, Var))
    return Region(tuple(flat), tuple(reversed(eqns)), tuple(outputs))


def step_index(length: int) -> Any:
    """The rows of the unknown loop that give each step its index."""
    return iota((length,), 0, np.int64)


def recomputed(tape: CarryTape, inv: list, rows: list, whole: list, final: list, t: Any,
               length: int, reverse: bool) -> tuple[list, list]:
    """The residuals of one unknown step: (current, next), from the tape's rows at t,
    the tapes `whole`, and the final carries (those the tape holds)."""
    after = sub(t, 1) if reverse else add(t, 1)  # clamped by the slice at the last step
    last = eq(t, 0 if reverse else length - 1)
    following = []
    for x, c in zip(whole, final):
        shape = type_of_value(c).shape
        row = dynamic_slice(x, [after] + [np.int64(0)] * len(shape), (1,) + shape)
        following.append(select(last, c, reshape(row, shape)))
    return (eval_region(tape.current, inv + rows), eval_region(tape.next, inv + following))
