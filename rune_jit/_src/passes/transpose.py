"""Transposition: run a linear region backwards, from output cotangents to input ones.

The region's inputs are split into linear ones (tangents) and the rest
(residuals). Equations that read no linear value are evaluated forward first
(a rematerialized computation lands here); the others are transposed in
reverse order, each by its primitive's rule, accumulating cotangents.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..ad_util import UndefinedPrimal, Zero
from ..ops.tangents import add_tangents, instantiate
from ..ir import Literal, Region, Var
from ..trace import bind, trace_flat, transforming
from . import at_eqn


@transforming()
def backward_pass(region: Region, linear: Sequence[bool], args: Sequence[Any],
                  cts: Sequence[Any]) -> list:
    """Cotangents of the linear params (Zero where none flows); `args` are the others."""
    lin: set[Var] = {p for p, is_lin in zip(region.params, linear) if is_lin}
    it = iter(args)
    env = {p: next(it) for p, is_lin in zip(region.params, linear) if not is_lin}

    def read(a):
        return a.value if isinstance(a, Literal) else env[a]

    def is_lin(a):
        return isinstance(a, Var) and a in lin

    lin_eqns = []
    for eqn in region.eqns:
        ins, params = eqn.closed
        if any(is_lin(a) for a in ins):
            lin.update(eqn.outputs)
            lin_eqns.append(eqn)
        else:
            with at_eqn("transpose", eqn):
                env.update(zip(eqn.outputs, bind(eqn.prim, *[read(a) for a in ins], **params)))

    ct_env: dict[Var, Any] = {}

    def accumulate(v: Var, ct: Any):
        if ct is not None and not isinstance(ct, Zero):
            ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for o, ct in zip(region.outputs, cts):
        if is_lin(o):
            accumulate(o, ct)
    for eqn in reversed(lin_eqns):
        ins, params = eqn.closed
        cts_out = [ct_env.pop(v) if v in ct_env else Zero(v.type) for v in eqn.outputs]
        if all(isinstance(c, Zero) for c in cts_out):
            continue
        vals = [UndefinedPrimal(a.type) if is_lin(a) else read(a) for a in ins]
        with at_eqn("transpose", eqn):
            cts_in = eqn.prim.rule("transpose")(cts_out, *vals, **params)
        for a, c in zip(ins, cts_in):
            if is_lin(a):
                accumulate(a, c)
    return [ct_env.get(p, Zero(p.type)) for p, is_l in zip(region.params, linear) if is_l]


@transforming()
def transpose_region(region: Region, linear: Sequence[bool],
                     instantiate_out: bool = True) -> tuple[Region, list[bool]]:
    """The transpose of a closed region linear in its `linear` params, as a region.

    It takes (non-linear params..., a cotangent per output...) and returns the
    cotangents of the linear params: all of them if `instantiate_out`, else
    only those reported nonzero.
    """
    nonzero: list[bool] = []
    n_args = sum(not x for x in linear)
    in_types = [p.type for p, is_l in zip(region.params, linear) if not is_l] + region.out_types

    def fn(*vals):
        cts = backward_pass(region, linear, vals[:n_args], vals[n_args:])
        keep = [instantiate_out or not isinstance(c, Zero) for c in cts]
        nonzero.extend(keep)
        return [instantiate(c) for c, k in zip(cts, keep) if k]

    return trace_flat(fn, in_types), nonzero
