"""Partial evaluation: split a region into what its known inputs determine and the rest.

`partial_eval_region` records two regions at once. The *known* builder gets
every equation whose inputs are all known; the *unknown* builder gets the
others. A known value used on the unknown side becomes a residual: the
unknown builder lifts it to a param of its own, and the known region returns
it. Linearize is jvp followed by this split, with the tangents unknown.

A primitive may hold a `partial_eval` rule, `rule(pe, unknowns, *args, **params)
-> outputs`, that stages its own known and unknown parts (`with using(pe.known)`,
`with using(pe.unknown)`); loops do, to keep residuals per step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..ir import Atom, Eqn, Literal, Region, Var, map_regions, renamed
from ..trace import Builder, Tracer, bind, checked, current, transforming, using
from . import at_eqn


@dataclass
class Split:
    known: Region  # known inputs -> (known outputs, residuals)
    unknown: Region  # (residuals, unknown inputs) -> unknown outputs
    out_unknowns: list[bool]
    num_res: int
    res_inputs: list[int | None]  # residual j is known input i, or None if computed


class PartialEval:
    """The two builders of one split, and the residuals that pass between them."""

    def __init__(self, recompute_unsized: bool = False):
        parent = current()
        self.recompute_unsized = recompute_unsized
        self.known = Builder(parent)
        self.residuals: dict[Var, tuple[Tracer, Tracer]] = {}
        self.recomputed: dict[Var, Tracer] = {}  # known results the unknown side recomputes
        self.unknown = Builder(parent, lift=self.lift, lift_from=self.known)

    def lift(self, t: Tracer) -> Tracer:
        if t.ir_var in self.recomputed:
            return self.recomputed[t.ir_var]
        source = self.unchecked(t.ir_var)
        if source is not t.ir_var:  # (a row or a capture: no tape of it)
            return self.lift(Tracer(source, self.known))
        eqn = self.known.producers.get(t.ir_var)
        if t.ir_var not in self.residuals and eqn is not None and self.recompute(eqn):
            ins, params = eqn.closed
            with using(self.unknown):  # (its regions anew: the known side holds them)
                outs = bind(eqn.prim, *[self.known_value(a) for a in ins],
                            **map_regions(params, renamed))
            self.recomputed.update(zip(eqn.outputs, outs))
            return self.recomputed[t.ir_var]
        if t.ir_var not in self.residuals:
            self.residuals[t.ir_var] = (t, Tracer(Var(t.type), self.unknown))
        return self.residuals[t.ir_var][1]

    def unchecked(self, a: Atom) -> Atom:
        """What `a` is a checked copy of: the check has run on the known side by the time
        the unknown side reads it."""
        eqn = self.known.producers.get(a) if isinstance(a, Var) else None
        if eqn is None or "checks" not in eqn.prim.traits or not isinstance(eqn.inputs[0], Var):
            return a
        return self.unchecked(eqn.inputs[0])

    def recompute(self, eqn: Eqn) -> bool:
        """Whether to recompute `eqn` on the unknown side rather than save its result: a
        gather of a smaller operand by indices that are inputs (in a loop, a capture or
        a row: saved anyway) saves the operand. In a loop step this is the difference
        between a tape of x and one of x[cols], nnz wide. With `recompute_unsized`, a
        value whose size is the steps an inner loop took (its tape) is recomputed from
        that loop's inputs: the residuals of a loop step are stacked over its steps, and
        those of a remat body leave it, where a tape of unknown length cannot go."""
        if self.recompute_unsized and any(o.type.unsized for o in eqn.outputs):
            return True
        if "expands" not in eqn.prim.traits:
            return False
        x, *rest = eqn.inputs
        forwarded = all(isinstance(a, Literal) or self.unchecked(a) in self.known.params
                        for a in rest)
        return forwarded and sum(o.type.nbytes for o in eqn.outputs) > x.type.nbytes

    def known_value(self, a: Atom) -> Any:
        return a.value if isinstance(a, Literal) else Tracer(a, self.known)

    def is_unknown(self, v: Any) -> bool:
        return isinstance(v, Tracer) and v.builder is self.unknown

    def default_rule(self, prim, unknowns, args, params) -> list:
        with using(self.unknown if any(unknowns) else self.known):
            return bind(prim, *args, **params)


@transforming()
def partial_eval_region(
    region: Region, unknowns: Sequence[bool], instantiate: bool | Sequence[bool] = False,
    custom_rules: bool = True, recompute_unsized: bool = False,
) -> Split:
    """Split `region` (closed) by which inputs are unknown. Without `custom_rules`, an
    equation with any unknown input is unknown as a whole. `recompute_unsized`: see
    PartialEval.recompute."""
    pe = PartialEval(recompute_unsized)
    n_out = len(region.outputs)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    k_params = [pe.known.new_param(p.type) for p, u in zip(region.params, unknowns) if not u]
    u_params = [pe.unknown.new_param(p.type) for p, u in zip(region.params, unknowns) if u]
    ks, us = iter(k_params), iter(u_params)
    env = {p: next(us) if u else next(ks) for p, u in zip(region.params, unknowns)}

    def read(a):
        return a.value if isinstance(a, Literal) else env[a]

    for eqn in region.eqns:
        ins, params = eqn.closed
        args = [read(a) for a in ins]
        unks = [pe.is_unknown(v) for v in args]
        rule = eqn.prim.rules.get("partial_eval") if any(unks) and custom_rules else None
        with at_eqn("partial evaluation", eqn):
            outs = (rule(pe, unks, *args, **params) if rule
                    else pe.default_rule(eqn.prim, unks, args, params))
        env.update(zip(eqn.outputs, outs))

    outs = [read(o) for o in region.outputs]
    out_unknowns = [pe.is_unknown(v) or i for v, i in zip(outs, inst)]
    with using(pe.known):
        known_outs = [pe.known.atom(v) for v, u in zip(outs, out_unknowns) if not u]
    with using(pe.unknown):
        unknown_outs = [pe.unknown.atom(v) for v, u in zip(outs, out_unknowns) if u]
    res = list(pe.residuals.values())
    k_vars = [t.ir_var for t in k_params]
    known = Region(tuple(k_vars), tuple(pe.known.eqns),
                   tuple(known_outs) + tuple(k.ir_var for k, _ in res))
    unknown = Region(tuple(u.ir_var for _, u in res) + tuple(t.ir_var for t in u_params),
                     tuple(pe.unknown.eqns), tuple(unknown_outs))
    res_inputs = [k_vars.index(k.ir_var) if k.ir_var in k_vars else None for k, _ in res]
    return Split(checked(known), checked(unknown), out_unknowns, len(res), res_inputs)
