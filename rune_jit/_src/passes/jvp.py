"""Forward mode: a region's jvp, with symbolic zero tangents."""

from __future__ import annotations

from typing import Any, Sequence

from ..ad_util import Zero
from ..ops.tangents import instantiate
from ..ir import Literal, Region
from ..trace import bind, trace_flat, transforming
from . import at_eqn


@transforming()
def jvp_eval(region: Region, primals: Sequence[Any], tangents: Sequence[Any]):
    """Evaluate `region` (closed) and its tangent; tangents may be Zero."""
    env_p = dict(zip(region.params, primals))
    env_t = dict(zip(region.params, tangents))

    def read_p(a):
        return a.value if isinstance(a, Literal) else env_p[a]

    def read_t(a):
        return Zero(a.type) if isinstance(a, Literal) else env_t[a]

    for eqn in region.eqns:
        ins, params = eqn.closed
        ts = [read_t(a) for a in ins]
        ps = [read_p(a) for a in ins]
        with at_eqn("jvp", eqn):
            if all(isinstance(t, Zero) for t in ts):
                outs = bind(eqn.prim, *ps, **params)
                touts = [Zero(v.type) for v in eqn.outputs]
            else:
                outs, touts = eqn.prim.rule("jvp")(ps, ts, **params)
        env_p.update(zip(eqn.outputs, outs))
        env_t.update(zip(eqn.outputs, touts))
    return [read_p(o) for o in region.outputs], [read_t(o) for o in region.outputs]


@transforming()
def jvp_region(
    region: Region, nonzeros: Sequence[bool], instantiate_out: bool | Sequence[bool] = False
) -> tuple[Region, list[bool]]:
    """The jvp of a closed region as a region.

    It takes (primals..., tangents of the `nonzeros` inputs...) and returns
    (outputs..., tangents of the outputs it reports nonzero...). An output whose
    tangent is zero is left out unless `instantiate_out` asks for it.
    """
    n_out = len(region.outputs)
    inst = [instantiate_out] * n_out if isinstance(instantiate_out, bool) else list(instantiate_out)
    out_nonzeros: list[bool] = []
    tan_types = [p.type for p, nz in zip(region.params, nonzeros) if nz]

    def fn(*args):
        primals, it = args[: len(region.params)], iter(args[len(region.params):])
        tangents = [next(it) if nz else Zero(p.type) for p, nz in zip(region.params, nonzeros)]
        outs, touts = jvp_eval(region, primals, tangents)
        keep = [not isinstance(t, Zero) or i for t, i in zip(touts, inst)]
        out_nonzeros.extend(keep)
        return outs + [instantiate(t) for t, k in zip(touts, keep) if k]

    new = trace_flat(fn, region.in_types + tan_types)
    return new, out_nonzeros
