"""Simplification: dead-code elimination, and re-tracing (which CSEs and folds constants).

The builder deduplicates identical equations and folds scalar constant ones as
it records them, so re-tracing a region simplifies it; `dce` then drops what
no output needs, inside nested regions too.
"""

from __future__ import annotations

from ..interpret import eval_region
from ..ir import Eqn, Region, Var, map_regions
from ..trace import trace_flat


def dce(region: Region) -> Region:
    """`region` without the equations (and loop outputs) no output depends on."""
    live: set[Var] = {o for o in region.outputs if isinstance(o, Var)}
    kept: list[Eqn] = []
    for eqn in reversed(region.eqns):
        used = [v in live for v in eqn.outputs]
        if not any(used) and not may_fail(eqn):
            continue
        rule = eqn.prim.rules.get("dce")
        if rule is not None and not all(used):
            eqn = rule(eqn, used)  # which cleans the regions it returns
        elif eqn.regions:
            eqn = eqn.rebuilt(params=map_regions(eqn.params, dce))
        live.update(a for a in eqn.inputs if isinstance(a, Var))
        live.update(eqn.captures)
        kept.append(eqn)
    if len(kept) == len(region.eqns) and not any(e.regions for e in kept):
        return region
    return Region(region.params, tuple(reversed(kept)), region.outputs)


def may_fail(eqn: Eqn) -> bool:
    """Whether `eqn` may raise (an iterate, a checked index), itself or in a region: such
    an equation is kept even when nothing reads it, so that every path raises alike."""
    return eqn.prim.effectful(eqn.params) or any(
        may_fail(e) for r in eqn.regions for e in r.eqns)


def live_params(region: Region) -> list[bool]:
    """Which params of `region`, free of dead code (as `dce` returns it), its body or
    outputs read."""
    used = {a for e in region.eqns for a in e.inputs} | set(region.outputs)
    used |= {c for e in region.eqns for c in e.captures}
    return [p in used for p in region.params]


def simplify(region: Region) -> Region:
    """A closed region re-traced (CSE, constant folding) with dead code removed."""
    return dce(trace_flat(lambda *args: eval_region(region, args), region.in_types))
